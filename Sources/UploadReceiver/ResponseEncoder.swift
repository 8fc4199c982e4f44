/// Turns a scripted response into the bytes of an HTTP/1.1 response.
enum ResponseEncoder {
    /// Headers the receiver sets itself; scripted values for them are dropped.
    private static let framingHeaders: Set<String> = ["content-length", "transfer-encoding", "connection"]

    /// The full response: status line with reason phrase, scripted headers, `Content-Length`
    /// (unless the status forbids a body), `Connection: close` when closing, then the body
    /// (omitted for `HEAD`).
    static func encode(_ response: ScriptedResponse, forHEAD: Bool, closing: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(HTTPReasonPhrase.forStatus(response.status))\r\n"
        for (name, value) in response.headers where !framingHeaders.contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        if !response.forbidsBody {
            head += "Content-Length: \(response.body.count)\r\n"
        }
        if closing { head += "Connection: close\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if !forHEAD, !response.forbidsBody { bytes += response.body }
        return bytes
    }

    /// The head of a streamed answer: the scripted status and headers, then `Content-Length:
    /// length`, or `Transfer-Encoding: chunked` when `length` is nil.
    static func streamedHead(_ response: ScriptedResponse, length: Int64?) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(HTTPReasonPhrase.forStatus(response.status))\r\n"
        for (name, value) in response.headers where !framingHeaders.contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        head += length.map { "Content-Length: \($0)\r\n" } ?? "Transfer-Encoding: chunked\r\n"
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8)
    }

    /// Whether the scripted headers ask for the connection to close after this response.
    static func asksToClose(_ response: ScriptedResponse) -> Bool {
        response.headers.contains { $0.0.lowercased() == "connection" && $0.1.lowercased().contains("close") }
    }

    /// The interim response sent after a head with `Expect: 100-continue`.
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A small plain-text error that closes the connection, for heads the receiver refuses.
    static func refusal(status: Int, reason: String) -> [UInt8] {
        encode(.status(status, body: reason + "\n", headers: [("Content-Type", "text/plain")]), forHEAD: false, closing: true)
    }
}
