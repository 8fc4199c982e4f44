import Foundation

/// A request body as the `InputStream` URLSession reads (`BodyReader` does the reading).
///
/// URLSession on Linux reads an `httpBodyStream` synchronously from libcurl's read callback
/// (`_BodyStreamSource`) and so never pauses the transfer; the file body source
/// (`uploadTask(fromFile:)`) pauses and unpauses libcurl around asynchronous reads, and the
/// unpause of a connection the server has dropped traps the whole process (a `try!` in
/// FoundationNetworking's EasyHandle). A read error returns -1, which makes libcurl abort the
/// request instead of sending a short body.
final class BodyInputStream: InputStream {
    private let reader: BodyReader
    private var status: Stream.Status = .notOpen

    init(_ reader: BodyReader) {
        self.reader = reader
        super.init(data: Data())
    }

    override func open() { if status == .notOpen { status = .open } }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { nil }
    /// True until the end, and in the error state too: URLSession takes false as "body complete",
    /// and a short body would leave the server waiting for the rest. (Before `open`, too: a
    /// rewind reads the stream forward before opening it.)
    override var hasBytesAvailable: Bool { status != .atEnd && status != .closed }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        guard status != .error, status != .closed else { return -1 }
        guard maxLength > 0 else { return 0 }
        let n = reader.read(into: buffer, count: maxLength)
        if n < 0 { status = .error } else if n == 0 { status = .atEnd }
        return n
    }
}
