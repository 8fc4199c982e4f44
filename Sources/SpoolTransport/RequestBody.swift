/// A request's body as the bytes it sends, written once for every transport: framing bytes (a
/// multipart preamble and epilogue, an S3 step's XML) around a byte range of the blob the spool
/// opened. URLSession reads it through `BodyInputStream`, libcurl through its read callback;
/// `BodyDigest` hashes the same parts.
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

    public let parts: [Part]
    /// Bytes the body sends: its `Content-Length`.
    public let length: Int64

    public init(_ parts: [Part]) {
        self.parts = parts
        length = parts.reduce(0) { $0 + $1.length }
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
    private var part = 0
    private var offset: Int64 = 0
    /// Bytes read since the body was last started from byte 0 (for a reader on one thread; the
    /// stall watch reads `progress` from another).
    public private(set) var bytesRead: Int64 = 0

    public init(_ body: RequestBody, progress: BodyProgress? = nil, rate: BodyRateGate? = nil, readHook: (@Sendable () -> Void)? = nil) {
        self.body = body
        self.progress = progress
        self.rate = rate
        self.readHook = readHook
    }

    public var length: Int64 { body.length }

    /// The next bytes, at most `count`: the number read, 0 at the end, -1 when the blob cannot be
    /// read to its recorded size (`BlobBody.failure` says why; the attempt is the item's fault).
    public func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        guard count > 0 else { return 0 }
        readHook?()
        guard let rate, part < body.parts.count else { return readParts(into: buffer, upTo: count) }
        let allowed = rate.take(upTo: count)
        let n = readParts(into: buffer, upTo: allowed)
        rate.giveBack(allowed - max(0, n))
        return n
    }

    /// Goes to `position` (libcurl rewinds to send the body again on a fresh connection); false
    /// past the end.
    public func seek(to position: Int64) -> Bool {
        guard position >= 0, position <= body.length else { return false }
        var rest = position
        part = 0
        while part < body.parts.count, rest >= body.parts[part].length, rest > 0 {
            rest -= body.parts[part].length
            part += 1
        }
        offset = rest
        if position == 0 {
            bytesRead = 0
            progress?.restarted()
        }
        return true
    }

    private func readParts(into buffer: UnsafeMutableRawPointer, upTo length: Int) -> Int {
        while part < body.parts.count {
            var n = 0
            switch body.parts[part] {
            case .bytes(let bytes):
                n = min(length, bytes.count - Int(offset))
                if n > 0 {
                    bytes.withUnsafeBytes { source in buffer.copyMemory(from: source.baseAddress! + Int(offset), byteCount: n) }
                }
            case .blob(let blob, let start, let rangeLength):
                let wanted = Int(min(Int64(length), rangeLength - offset))
                if wanted > 0 {
                    n = blob.read(into: buffer, count: wanted, at: start + offset)
                    // A range past the blob's recorded size cannot be sent either.
                    if n <= 0 { return -1 }
                }
            }
            if n > 0 {
                offset += Int64(n)
                bytesRead += Int64(n)
                progress?.read(n)
                return n
            }
            part += 1
            offset = 0
        }
        return 0
    }
}
