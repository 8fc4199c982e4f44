/// A JSON value that is not a container: what `--success-json` compares.
public enum JSONScalar: Equatable, Sendable, CustomStringConvertible {
    /// Numbers compare by value: `200`, `200.0` and `2e2` are equal.
    case number(Double)
    case string(String)
    case bool(Bool)
    case null

    /// The value as JSON text, for messages.
    public var description: String {
        switch self {
        case .number(let value):
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .string(let text): JSONScalar.quoted(text)
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        }
    }

    /// `text` as a JSON string literal, control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
