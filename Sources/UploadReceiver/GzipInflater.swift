import CZlib

/// Inflates a gzip body (`Content-Encoding: gzip`) as it arrives, the way a server that decodes
/// request bodies does: zlib's inflate, one member after another (concatenated members are one
/// gzip file, RFC 1952 section 2.2), each member's CRC-32 and length checked by zlib. The body is
/// whole only if it ends where a member ends. Public for tests that check what a client sent.
public final class GzipInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var output = [UInt8](repeating: 0, count: 64 * 1024)
    /// The input so far ended exactly at the end of a member (true before the first byte: an
    /// empty body is not a gzip file, see `complete`).
    private(set) var atMemberEnd = false
    private var sawInput = false
    /// Why the body is not gzip (zlib's words), once it is known.
    private(set) var failure: String?

    /// The content of a whole gzip body, or nil when it is not one.
    public static func inflate(_ body: [UInt8]) -> [UInt8]? {
        let inflater = GzipInflater()
        var content: [UInt8] = []
        guard inflater.feed(body[...], emit: { content += $0 }), inflater.complete else { return nil }
        return content
    }

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        if spoold_inflate_init_gzip(stream) != Z_OK { failure = "zlib could not start inflating" }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Whether the body seen so far is a whole gzip file.
    var complete: Bool { failure == nil && sawInput && atMemberEnd }

    /// Inflates `bytes`, handing what they inflate to `emit` in pieces; false once the body is
    /// known not to be gzip (`failure`).
    func feed(_ bytes: ArraySlice<UInt8>, emit: (ArraySlice<UInt8>) -> Void) -> Bool {
        guard failure == nil else { return false }
        guard !bytes.isEmpty else { return true }
        sawInput = true
        var input = Array(bytes)
        var offset = 0
        while offset < input.count {
            if atMemberEnd {
                // Another member follows.
                inflateReset(stream)
                atMemberEnd = false
            }
            let (consumed, made, status) = input.withUnsafeMutableBytes { inputBytes in
                output.withUnsafeMutableBytes { outputBytes in
                    stream.pointee.next_in = inputBytes.baseAddress!.assumingMemoryBound(to: Bytef.self) + offset
                    stream.pointee.avail_in = uInt(inputBytes.count - offset)
                    stream.pointee.next_out = outputBytes.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(outputBytes.count)
                    let status = CZlib.inflate(stream, Z_NO_FLUSH)
                    return (inputBytes.count - offset - Int(stream.pointee.avail_in), outputBytes.count - Int(stream.pointee.avail_out), status)
                }
            }
            if made > 0 { emit(output[0..<made]) }
            offset += consumed
            switch status {
            case Z_STREAM_END:
                atMemberEnd = true
            case Z_OK:
                continue
            case Z_BUF_ERROR where consumed > 0 || made > 0:
                continue
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                failure = "not a gzip body: \(message)"
                return false
            }
        }
        input.removeAll()
        return true
    }
}
