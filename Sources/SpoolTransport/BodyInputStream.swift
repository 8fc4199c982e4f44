import Foundation

/// A request body as an `InputStream`: fixed byte parts (a multipart preamble and epilogue)
/// around a blob read from its descriptor.
///
/// URLSession on Linux reads an `httpBodyStream` synchronously from libcurl's read callback
/// (`_BodyStreamSource`) and so never pauses the transfer; the file body source
/// (`uploadTask(fromFile:)`) pauses and unpauses libcurl around asynchronous reads, and the
/// unpause of a connection the server has dropped traps the whole process (a `try!` in
/// FoundationNetworking's EasyHandle). A read error returns -1, which makes libcurl abort the
/// request instead of sending a short body.
final class BodyInputStream: InputStream {
    enum Part: Sendable {
        case bytes([UInt8])
        case blob(BlobBody)
        /// `length` bytes of the blob from `offset`: one part of an S3 multipart upload.
        case range(BlobBody, offset: Int64, length: Int64)

        var length: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .blob(let blob): blob.size
            case .range(_, _, let length): length
            }
        }
    }

    private let parts: [Part]
    private var part = 0
    private var offset: Int64 = 0
    private var status: Stream.Status = .notOpen
    /// Told of every read (`URLSessionTransport`'s stall watch).
    private let progress: BodyProgress?
    /// Runs before each read: a test holds it, as a lost write event holds libcurl.
    private let readHook: (@Sendable () -> Void)?
    /// `--limit-rate`: each read takes its bytes from the daemon's shared rate first.
    private let rate: BodyRateGate?

    init(_ parts: [Part], progress: BodyProgress? = nil, readHook: (@Sendable () -> Void)? = nil, rate: BodyRateGate? = nil) {
        self.parts = parts
        self.progress = progress
        self.readHook = readHook
        self.rate = rate
        super.init(data: Data())
    }

    /// The body's length, sent as `Content-Length`.
    static func length(of parts: [Part]) -> Int64 { parts.reduce(0) { $0 + $1.length } }

    override func open() { if status == .notOpen { status = .open } }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { nil }
    /// True until the end, and in the error state too: URLSession takes false as "body complete",
    /// and a short body would leave the server waiting for the rest. (Before `open`, too: a
    /// rewind reads the stream forward before opening it.)
    override var hasBytesAvailable: Bool { status != .atEnd && status != .closed }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength wanted: Int) -> Int {
        guard status != .error, status != .closed else { return -1 }
        readHook?()
        guard let rate, part < parts.count else { return read(buffer, upTo: wanted) }
        let allowed = rate.take(upTo: wanted)
        let n = read(buffer, upTo: allowed)
        rate.giveBack(allowed - max(0, n))
        return n
    }

    /// The next bytes of the body, at most `length`: 0 at its end, -1 when the blob cannot be read.
    private func read(_ buffer: UnsafeMutablePointer<UInt8>, upTo length: Int) -> Int {
        while part < parts.count {
            let n: Int
            switch parts[part] {
            case .bytes(let bytes):
                n = min(length, bytes.count - Int(offset))
                if n > 0 {
                    bytes.withUnsafeBufferPointer { source in
                        buffer.update(from: source.baseAddress! + Int(offset), count: n)
                    }
                }
            case .blob(let blob):
                n = blob.read(into: buffer, count: length, at: offset)
                if n < 0 {
                    status = .error
                    return -1
                }
            case .range(let blob, let start, let rangeLength):
                let wanted = Int(min(Int64(length), rangeLength - offset))
                n = wanted > 0 ? blob.read(into: buffer, count: wanted, at: start + offset) : 0
                if n < 0 || (n == 0 && wanted > 0) {
                    status = .error
                    return -1
                }
            }
            if n > 0 {
                offset += Int64(n)
                progress?.read(n)
                return n
            }
            part += 1
            offset = 0
        }
        status = .atEnd
        return 0
    }
}
