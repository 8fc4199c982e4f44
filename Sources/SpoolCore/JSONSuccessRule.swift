/// `--success-json PATH=VALUE`: a 2xx answer is success only if its JSON body holds VALUE at
/// PATH (for an API that answers `200` with `{"status": {"code": 500}}` when it failed).
///
/// PATH is a dot path of object keys (`status.code`); a segment of digits also indexes an array
/// (`results.0.ok`). Keys that contain a dot cannot be named. VALUE is `true`, `false`, `null`,
/// a JSON number (compared by value: `200` equals `200.0`), a JSON string in double quotes
/// (`"ok"`, escapes allowed), or else taken as a bare string (`state=ok` compares with `"ok"`).
public struct JSONSuccessRule: Equatable, Sendable, CustomStringConvertible {
    public var path: [String]
    public var expected: JSONScalar

    public init(path: [String], expected: JSONScalar) {
        self.path = path
        self.expected = expected
    }

    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Parses `PATH=VALUE` (split at the first `=`).
    public static func parse(_ text: String) throws(ParseError) -> JSONSuccessRule {
        guard let equals = text.firstIndex(of: "=") else {
            throw ParseError(description: "'\(text)' is not PATH=VALUE (e.g. status.code=200)")
        }
        let pathText = text[..<equals]
        let valueText = String(text[text.index(after: equals)...])
        let path = pathText.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !pathText.isEmpty, !path.contains(where: \.isEmpty) else {
            throw ParseError(description: "'\(text)': the path '\(pathText)' has an empty segment")
        }
        return JSONSuccessRule(path: path, expected: try value(valueText))
    }

    private static func value(_ text: String) throws(ParseError) -> JSONScalar {
        let first = text.unicodeScalars.first
        guard first != "{", first != "[" else {
            throw ParseError(description: "VALUE '\(text)' is not a scalar: objects and arrays are not compared")
        }
        let looksJSON = first == "\"" || text == "true" || text == "false" || text == "null"
            || first == "-" || (first.map { $0 >= "0" && $0 <= "9" } ?? false)
        guard looksJSON else { return .string(text) }
        switch try? JSONPathReader.value(at: [], in: Array(text.utf8)) {
        case .scalar(let scalar)?:
            return scalar
        default:
            // `"` must open a proper JSON string; anything else that is not valid JSON (`1e`,
            // `-x`, `2024-01-01`) is a bare string.
            guard first != "\"" else { throw ParseError(description: "VALUE \(text) is not a valid JSON string") }
            return .string(text)
        }
    }

    /// The dot path and value as given, for logs and messages.
    public var description: String { "\(path.joined(separator: "."))=\(expected)" }

    /// Why `body` does not satisfy the rule, or nil when it does. `truncated` means only a
    /// prefix of the answer was kept (it was larger than the bound), which fails the rule.
    public func failure(body: [UInt8], truncated: Bool, limit: Int) -> String? {
        let rule = "--success-json \(self)"
        guard !truncated else { return "the answer is larger than \(limit / 1024) KiB, so \(rule) cannot be checked" }
        let found: JSONPathReader.Found
        do {
            found = try JSONPathReader.value(at: path, in: body)
        } catch {
            return body.isEmpty ? "the answer is empty, not JSON (\(rule))" : "the answer is not JSON: \(error) (\(rule))"
        }
        let name = path.joined(separator: ".")
        switch found {
        case .scalar(let value) where value == expected:
            return nil
        case .scalar(let value):
            return "the answer's \(name) is \(value), not \(expected) (\(rule))"
        case .object:
            return "the answer's \(name) is an object, not \(expected) (\(rule))"
        case .array:
            return "the answer's \(name) is an array, not \(expected) (\(rule))"
        case .missing:
            return "the answer has no \(name) (\(rule))"
        }
    }
}
