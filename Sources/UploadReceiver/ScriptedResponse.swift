/// What the receiver does with one request: send a status with headers and body, or apply a
/// fault that imitates a broken server or network.
///
/// `Content-Length`, `Transfer-Encoding` and `Connection` entries in `headers` are ignored: the
/// receiver frames every response itself (always with `Content-Length`, except 1xx, 204 and 304
/// which carry no body). A response to a `HEAD` request sends the headers only.
public struct ScriptedResponse: Sendable {
    /// How the receiver misbehaves instead of answering.
    public enum Fault: Sendable, Equatable {
        /// Answer normally.
        case none
        /// Read the head, then close the socket without reading the body or answering (and
        /// without sending `100 Continue`).
        case closeBeforeBody
        /// Read about half of the body, then close without answering. With a chunked body the
        /// total is unknown, so "half" means half of the first chunk.
        case closeMidBody
        /// Read the whole body, then keep the connection open without answering until the
        /// client closes it or the receiver stops.
        case neverAnswer
        /// Read this many body bytes (all of a shorter body), then reset the connection: a close
        /// with `SO_LINGER` 0 sends RST.
        case resetAfter(bodyBytes: Int64)
        /// Read this many body bytes (all of a shorter body), then send FIN (`shutdown(SHUT_WR)`)
        /// and discard whatever else arrives until the client closes: no answer, no reset.
        case finAfter(bodyBytes: Int64)
        /// Read this many body bytes (all of a shorter body), answer `status`, `headers` and `body`
        /// at once, wait 100 ms and reset the connection without reading the rest: a server that
        /// answers early (nginx's `return 201`) and then drops a client still sending.
        case answerThenReset(bodyBytes: Int64)
        /// Read the body, then answer `status` and `headers` with a chunked body that never ends,
        /// until the client closes or the receiver stops.
        case endlessAnswer
        /// Read the body, then answer `status` and `headers` with a chunked body of one byte
        /// every 50 ms that never ends (never silent long enough for an idle timeout).
        case tricklingAnswer
        /// Read the body, then answer `status` and `headers` with a body of this many bytes,
        /// generated as it is sent (never held in memory).
        case largeAnswer(bytes: Int64)
    }

    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    public var fault: Fault

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], fault: Fault = .none) {
        self.status = status
        self.headers = headers
        self.body = body
        self.fault = fault
    }

    /// A normal answer with a UTF-8 body.
    public static func status(_ code: Int, body: String = "", headers: [(String, String)] = []) -> ScriptedResponse {
        ScriptedResponse(status: code, headers: headers, body: Array(body.utf8))
    }

    /// S3's answer to a request past a prefix's request rate: `503` with the `SlowDown` error.
    public static let slowDown = ScriptedResponse.status(
        503, body: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
        headers: [("Content-Type", "application/xml")])

    /// A fault instead of an answer; the status is irrelevant and set to 0.
    public static func faulted(_ fault: Fault) -> ScriptedResponse {
        ScriptedResponse(status: 0, fault: fault)
    }

    /// Whether the answer is sent as a stream after the body (`endlessAnswer`, `largeAnswer`).
    var streamsAnswer: Bool {
        switch fault {
        case .endlessAnswer, .tricklingAnswer, .largeAnswer: true
        default: false
        }
    }

    /// Whether the response sends no body and no `Content-Length` whatever the request was.
    var forbidsBody: Bool { (100..<200).contains(status) || status == 204 || status == 304 }
}
