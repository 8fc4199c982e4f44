import CZlib

/// The gzip form (RFC 1952) of a body's content, made while it is read: zlib's deflate at level 6
/// (gzip's default), in 64 KiB steps, so memory stays flat (zlib's 256 KiB of state and two
/// buffers) whatever the body's size, and nothing is written anywhere.
///
/// The same content read again gives the same bytes: deflate is deterministic for one zlib, one
/// level and one sequence of calls, and the calls here depend only on the content (fixed input
/// and output steps), never on how the reader asks for bytes. That is what lets a body be
/// measured (its length, its hash) in a first pass and sent in a second (`BodyDigest.measure`),
/// and sent again from byte 0 on a fresh connection. A body that came out another length the
/// second time is caught where it is read (`BodyReader`).
///
/// `padTo`: an S3 part must be at least 5 MiB unless it is the last, and a part that compresses
/// below that would make the store refuse the completion (`EntityTooSmall`). Such a part is
/// followed by a second, empty gzip member of empty stored deflate blocks (5 bytes each) up to at
/// least `padTo` bytes: concatenated members are one gzip file (RFC 1952 section 2.2), and the
/// padding inflates to nothing.
final class GzipStream {
    static let level: Int32 = 6
    static let step = 64 * 1024

    private var cursor: PartCursor
    private let padTo: Int64
    private let stream: UnsafeMutablePointer<z_stream>
    private var input = [UInt8](repeating: 0, count: GzipStream.step)
    private var inputRange = 0..<0
    private var output = [UInt8](repeating: 0, count: GzipStream.step)
    private var outputRange = 0..<0
    private var contentEnded = false
    private var memberEnded = false
    /// Bytes of the padding member still to give, once the member ended short of `padTo`.
    private var padding: [UInt8]?
    private var paddingOffset = 0
    /// Bytes given so far.
    private(set) var produced: Int64 = 0
    /// Why the stream failed (zlib's words), after a read returned -1 for its own reason.
    private(set) var failure: String?

    /// - Parameter padTo: the least number of bytes the stream gives (0: no padding).
    init(_ parts: [RequestBody.Part], padTo: Int64 = 0) {
        cursor = PartCursor(parts)
        self.padTo = padTo
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = spoold_deflate_init_gzip(stream, GzipStream.level)
        if status != Z_OK { failure = "zlib could not start a gzip stream (deflateInit2: \(status))" }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Back to byte 0 of the same gzip form.
    func restart() {
        _ = cursor.seek(to: 0)
        deflateReset(stream)
        (inputRange, outputRange, contentEnded, memberEnded) = (0..<0, 0..<0, false, false)
        (padding, paddingOffset, produced) = (nil, 0, 0)
    }

    /// The next bytes, at most `count`: the number given, 0 at the end, -1 when the content
    /// cannot be read (`BlobBody.failure` says why) or zlib failed (`failure`).
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        guard failure == nil else { return -1 }
        while true {
            if !outputRange.isEmpty {
                let n = min(count, outputRange.count)
                output.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + outputRange.lowerBound, byteCount: n) }
                outputRange = (outputRange.lowerBound + n)..<outputRange.upperBound
                produced += Int64(n)
                return n
            }
            if memberEnded { return readPadding(into: buffer, count: count) }
            if inputRange.isEmpty && !contentEnded {
                let n = input.withUnsafeMutableBytes { cursor.read(into: $0.baseAddress!, upTo: GzipStream.step) }
                if n < 0 { return -1 }
                if n == 0 { contentEnded = true } else { inputRange = 0..<n }
            }
            guard deflateStep() else { return -1 }
        }
    }

    /// One call of `deflate` into the empty output buffer: Z_FINISH once the content ended.
    private func deflateStep() -> Bool {
        let (consumed, made, status) = input.withUnsafeMutableBytes { inputBytes in
            output.withUnsafeMutableBytes { outputBytes in
                stream.pointee.next_in = inputBytes.baseAddress!.assumingMemoryBound(to: Bytef.self) + inputRange.lowerBound
                stream.pointee.avail_in = uInt(inputRange.count)
                stream.pointee.next_out = outputBytes.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(outputBytes.count)
                let status = deflate(stream, contentEnded ? Z_FINISH : Z_NO_FLUSH)
                return (inputRange.count - Int(stream.pointee.avail_in), outputBytes.count - Int(stream.pointee.avail_out), status)
            }
        }
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
            failure = "zlib failed to compress the body (deflate: \(status))"
            return false
        }
        inputRange = (inputRange.lowerBound + consumed)..<inputRange.upperBound
        outputRange = 0..<made
        if status == Z_STREAM_END { memberEnded = true }
        return true
    }

    private func readPadding(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        if padding == nil { padding = GzipStream.paddingMember(atLeast: padTo - produced) }
        guard let padding, paddingOffset < padding.count else { return 0 }
        let n = min(count, padding.count - paddingOffset)
        padding.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + paddingOffset, byteCount: n) }
        paddingOffset += n
        produced += Int64(n)
        return n
    }

    /// An empty gzip member of at least `length` bytes (none for 0 or less): a 10-byte header,
    /// empty stored blocks (`00 00 00 FF FF`, RFC 1951 section 3.2.4), a final one
    /// (`01 00 00 FF FF`), and the trailer of an empty content (CRC-32 0, size 0): 23 + 5k bytes.
    static func paddingMember(atLeast length: Int64) -> [UInt8] {
        guard length > 0 else { return [] }
        let blocks = Int(max(0, (length - 23 + 4) / 5))
        var member: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        member.reserveCapacity(23 + 5 * blocks)
        for _ in 0..<blocks { member += [0, 0, 0, 0xFF, 0xFF] }
        member += [1, 0, 0, 0xFF, 0xFF]
        member += [UInt8](repeating: 0, count: 8)
        return member
    }
}

/// Reads a body's parts in order: its content as the spool holds it (framing bytes and ranges of
/// the blob). `BodyReader` and `GzipStream` read through it.
struct PartCursor {
    let parts: [RequestBody.Part]
    private var part = 0
    private var offset: Int64 = 0

    init(_ parts: [RequestBody.Part]) { self.parts = parts }

    var contentLength: Int64 { parts.reduce(0) { $0 + $1.length } }

    /// The next bytes, at most `length`: the number read, 0 at the end, -1 when the blob cannot
    /// be read to its recorded size.
    mutating func read(into buffer: UnsafeMutableRawPointer, upTo length: Int) -> Int {
        while part < parts.count {
            var n = 0
            switch parts[part] {
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
                return n
            }
            part += 1
            offset = 0
        }
        return 0
    }

    /// Goes to `position` of the content; false past its end.
    mutating func seek(to position: Int64) -> Bool {
        guard position >= 0, position <= contentLength else { return false }
        var rest = position
        part = 0
        while part < parts.count, rest >= parts[part].length, rest > 0 {
            rest -= parts[part].length
            part += 1
        }
        offset = rest
        return true
    }
}
