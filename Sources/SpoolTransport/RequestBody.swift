import SpoolCore

/// A request's body as the bytes it sends, written once for every transport: framing bytes (a
/// multipart preamble and epilogue, an S3 step's XML) around a byte range of the blob the spool
/// opened, sent as they are or compressed while they are read (`coding`, `--compress`).
/// URLSession reads it through `BodyInputStream`, libcurl through its read callback;
/// `BodyDigest` hashes the same bytes.
public struct RequestBody: Sendable {
    public enum Part: Sendable {
        case bytes([UInt8])
        /// `length` bytes of the blob from `offset` (all of it, or one part of a multipart upload).
        case blob(BlobBody, offset: Int64, length: Int64)

        var length: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .blob(_, _, let length): length
            }
        }
    }

    /// The content, in order.
    public let parts: [Part]
    /// The coding the content is sent in (`GzipStream`), nil: as it is.
    public let coding: ContentCoding?
    /// With `coding`: the least number of bytes sent (`GzipStream`'s padding of a small S3 part).
    public let padTo: Int64
    /// Bytes the body sends: its `Content-Length` (the coded length, measured: `BodyDigest.measure`).
    public let length: Int64

    public init(_ parts: [Part]) {
        self.parts = parts
        (coding, padTo) = (nil, 0)
        length = parts.reduce(0) { $0 + $1.length }
    }

    /// `parts` sent in `coding`, which makes `length` bytes of them (as measured).
    public init(_ parts: [Part], coding: ContentCoding, padTo: Int64 = 0, length: Int64) {
        (self.parts, self.coding, self.padTo, self.length) = (parts, coding, padTo, length)
    }

    /// The blob the body reads, if it reads one.
    var blob: BlobBody? {
        for part in parts { if case .blob(let blob, _, _) = part { return blob } }
        return nil
    }
}

/// Reads one stream of a `RequestBody` from a position: each read takes its bytes from the
/// daemon's `--limit-rate` first (`BodyRateGate`: one bucket for every body, whichever transport)
/// and tells `progress` (the stall watch, the bytes an attempt sent). One reader per stream
/// (URLSession) or transfer (libcurl), used by one thread at a time.
public final class BodyReader: @unchecked Sendable {
    private let body: RequestBody
    private let progress: BodyProgress?
    private let rate: BodyRateGate?
    /// Runs before each read: a test holds it, as a lost write event holds libcurl.
    private let readHook: (@Sendable () -> Void)?
    private var cursor: PartCursor
    /// With a coded body: its coded form, made as it is read.
    private let coded: GzipStream?
    /// Bytes read since the body was last started from byte 0 (for a reader on one thread; the
    /// stall watch reads `progress` from another).
    public private(set) var bytesRead: Int64 = 0

    public init(_ body: RequestBody, progress: BodyProgress? = nil, rate: BodyRateGate? = nil, readHook: (@Sendable () -> Void)? = nil) {
        self.body = body
        self.progress = progress
        self.rate = rate
        self.readHook = readHook
        cursor = PartCursor(body.parts)
        coded = body.coding.map { _ in GzipStream(body.parts, padTo: body.padTo) }
    }

    public var length: Int64 { body.length }

    /// The next bytes, at most `count`: the number read, 0 at the end, -1 when the blob cannot be
    /// read to its recorded size (`BlobBody.failure` says why; the attempt is the item's fault).
    public func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        guard count > 0 else { return 0 }
        readHook?()
        guard let rate, bytesRead < body.length else { return readBody(into: buffer, upTo: count) }
        let allowed = rate.take(upTo: count)
        let n = readBody(into: buffer, upTo: allowed)
        rate.giveBack(allowed - max(0, n))
        return n
    }

    /// Goes to `position` (libcurl rewinds to send the body again on a fresh connection); false
    /// past the end. A coded body starts its coded form again and skips to `position`.
    public func seek(to position: Int64) -> Bool {
        guard position >= 0, position <= body.length else { return false }
        if let coded {
            coded.restart()
            var skipped: Int64 = 0
            var scratch = [UInt8](repeating: 0, count: position > 0 ? GzipStream.step : 0)
            while skipped < position {
                let n = scratch.withUnsafeMutableBytes { coded.read(into: $0.baseAddress!, count: Int(min(Int64($0.count), position - skipped))) }
                guard n > 0 else { return false }
                skipped += Int64(n)
            }
        } else {
            guard cursor.seek(to: position) else { return false }
        }
        bytesRead = position
        if position == 0 { progress?.restarted() }
        return true
    }

    private func readBody(into buffer: UnsafeMutableRawPointer, upTo length: Int) -> Int {
        let n: Int
        if let coded {
            // Exactly the measured length: a coded form that came out longer or shorter than it
            // did when it was measured means the content is not what it was.
            let room = Int(min(Int64(length), body.length - bytesRead))
            n = room > 0 ? coded.read(into: buffer, count: room) : 0
            if n < 0 {
                if let failure = coded.failure { body.blob?.noteFailure(failure) }
                return -1
            }
            let shorter = n == 0 && bytesRead < body.length
            if shorter || (room == 0 && length > 0 && coded.read(into: buffer, count: 1) > 0) {
                body.blob?.noteFailure(
                    "its payload changed while it was sent: its gzip form came out \(shorter ? "shorter" : "longer") than the "
                        + "\(body.length) B measured before sending")
                return -1
            }
        } else {
            n = cursor.read(into: buffer, upTo: length)
            if n < 0 { return -1 }
        }
        if n > 0 {
            bytesRead += Int64(n)
            progress?.read(n)
        }
        return n
    }
}
