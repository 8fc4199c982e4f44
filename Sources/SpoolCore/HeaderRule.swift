/// What may go on the wire as an HTTP header field (RFC 9110 section 5.1 and 5.5): the one rule,
/// applied where a value enters (a sidecar, `--header`, `--header-file`, `--header-env`,
/// `--content-type`) and again where each transport builds its request, so a value that slipped
/// past the first check (a json edited by hand, a new way in) still never reaches the wire.
///
/// A line break in a value ends the field and starts another (`Host: evil`), or ends the request
/// and starts a second one (request smuggling); libcurl sends such a value as it is. Messages
/// name the header, never its value: it may be a secret.
public enum HeaderRule {
    /// Headers spoold sets itself; a user value would break the request or its idempotency.
    public static let reserved: Set<String> = [
        "content-length", "transfer-encoding", "host", "idempotency-key", "connection", "expect",
    ]

    /// A header as `Name: value`, split and trimmed.
    public struct Field: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) { (self.name, self.value) = (name, value) }
    }

    /// Why a field name cannot be sent, or nil: it must be a token (RFC 9110 section 5.6.2).
    public static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "the name is empty" }
        for c in name.utf8 where !isTokenCharacter(c) {
            return "the name has a character a header name may not have (\(describe(c)))"
        }
        return nil
    }

    /// Why a field value cannot be sent, or nil: CR, LF, NUL and the other control characters are
    /// refused (a value is visible characters, spaces, tabs and bytes of UTF-8 text, RFC 9110
    /// section 5.5).
    public static func valueProblem(_ value: String) -> String? {
        for c in value.utf8 where (c < 0x20 && c != 0x09) || c == 0x7F {
            return "the value contains \(describe(c))"
        }
        return nil
    }

    /// Why a header given by a user (an option, a file, a sidecar) is refused, or nil: its name,
    /// its value, or a name spoold sets itself.
    public static func problem(name: String, value: String) -> String? {
        if let problem = nameProblem(name) { return problem }
        if reserved.contains(name.lowercased()) { return "spoold sets \(name) itself" }
        return valueProblem(value)
    }

    public static func isValid(name: String, value: String) -> Bool { problem(name: name, value: value) == nil }

    /// Parses `Name: value` (as given to `--header`, a line of `--header-file`): both trimmed of
    /// spaces and tabs, then checked (`problem`).
    public static func parse(_ text: String) -> Result<Field, Refusal> {
        guard let colon = text.firstIndex(of: ":") else { return .failure(Refusal("expected 'Name: value'")) }
        let field = Field(name: trimmed(text[..<colon]), value: trimmed(text[text.index(after: colon)...]))
        if let problem = problem(name: field.name, value: field.value) { return .failure(Refusal(problem)) }
        return .success(field)
    }

    /// Why a request cannot be sent as built, naming the header, or nil: every field of
    /// `headers` and the `Content-Type` pass `nameProblem` and `valueProblem`, and none is one
    /// spoold sets itself. The last check, where a transport builds its request.
    public static func requestProblem(headers: [String: String], contentType: String) -> String? {
        if let problem = valueProblem(contentType) { return "header Content-Type: \(problem)" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            if let problem = problem(name: name, value: value) { return "header \(printable(name)): \(problem)" }
        }
        return nil
    }

    /// A refused header, with why (never the value).
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// A name for messages: one with characters a name may not have is shown escaped.
    public static func printable(_ name: String) -> String { LogEscaping.line(name) }

    static func isTokenCharacter(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || "!#$%&'*+-.^_`|~".utf8.contains(c)
    }

    static func describe(_ c: UInt8) -> String {
        switch c {
        case 0x0D: "a carriage return (CR)"
        case 0x0A: "a line feed (LF)"
        case 0x00: "a NUL byte"
        case 0x20: "a space"
        case 0x09: "a tab"
        case ..<0x20, 0x7F: "the control character 0x" + String(c, radix: 16, uppercase: true)
        case 0x80...: "a non-ASCII byte"
        default: "'" + String(UnicodeScalar(c)) + "'"
        }
    }

    static func trimmed(_ text: Substring) -> String {
        var s = text
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
