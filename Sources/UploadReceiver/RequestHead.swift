/// A parsed HTTP/1.x request head: request line and header fields, plus the framing rules the
/// receiver needs (body length, keep-alive, `Expect: 100-continue`).
struct RequestHead {
    /// How the request body is delimited.
    enum BodyFraming: Equatable {
        case none
        case length(Int64)
        case chunked
    }

    /// Why a head was refused, with the status to answer before closing.
    struct Refusal: Error {
        var status: Int
        var reason: String
    }

    var method: String
    var target: String
    /// True for HTTP/1.1 (and any later 1.x); false for HTTP/1.0.
    var isHTTP11: Bool
    var headers: [(name: String, value: String)]

    /// Parses the head's bytes (without the terminating blank line).
    init(parsing bytes: [UInt8]) throws(Refusal) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { throw Refusal(status: 400, reason: "empty request line") }

        let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard parts.count == 3 else { throw Refusal(status: 400, reason: "malformed request line") }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version.hasPrefix("HTTP/1.") else { throw Refusal(status: 505, reason: "unsupported HTTP version") }
        method = String(decoding: parts[0], as: UTF8.self)
        target = String(decoding: parts[1], as: UTF8.self)
        isHTTP11 = version != "HTTP/1.0"
        guard method.utf8.allSatisfy(RequestHead.isTokenByte) else { throw Refusal(status: 400, reason: "malformed method") }

        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw Refusal(status: 400, reason: "header line without a colon")
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(RequestHead.isTokenByte) else {
                throw Refusal(status: 400, reason: "malformed header name")
            }
            let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
            let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: trimmed, as: UTF8.self)))
        }
        headers = fields
    }

    /// All values of a header, case-insensitive name, in order.
    func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// Comma-separated tokens across all fields of a header, lowercased and trimmed.
    func tokens(of name: String) -> [String] {
        values(of: name).flatMap { $0.split(separator: ",") }.map {
            $0.trimmingSpaces().lowercased()
        }.filter { !$0.isEmpty }
    }

    /// The body framing per RFC 9112 §6: chunked wins over Content-Length; no framing headers
    /// means no body (whatever the method).
    func bodyFraming() throws(Refusal) -> BodyFraming {
        let codings = tokens(of: "Transfer-Encoding")
        if !codings.isEmpty {
            guard codings.last == "chunked" else { throw Refusal(status: 501, reason: "unsupported transfer coding") }
            guard codings.count == 1 else { throw Refusal(status: 501, reason: "unsupported transfer coding") }
            return .chunked
        }
        let lengths = Set(values(of: "Content-Length").flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces() })
        guard let text = lengths.first else { return .none }
        guard lengths.count == 1, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let length = Int64(text)
        else { throw Refusal(status: 400, reason: "malformed Content-Length") }
        return length == 0 ? .none : .length(length)
    }

    /// Whether the connection stays open after this request's response.
    var keepsAlive: Bool {
        let connection = tokens(of: "Connection")
        if connection.contains("close") { return false }
        return isHTTP11 || connection.contains("keep-alive")
    }

    /// Whether the client waits for `100 Continue` before sending the body.
    /// The body is gzip (`Content-Encoding: gzip`): the receiver inflates and checks it.
    var isGzip: Bool {
        headers.contains { $0.name.lowercased() == "content-encoding" && $0.value.trimmingCharacters(in: .whitespaces).lowercased() == "gzip" }
    }

    var expectsContinue: Bool {
        isHTTP11 && tokens(of: "Expect").contains("100-continue")
    }

    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(c)
        }
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let bytes = self.utf8.drop { $0 == 0x20 || $0 == 0x09 }
        let trimmed = bytes.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        return String(decoding: trimmed, as: UTF8.self)
    }
}
