/// Makes any text safe to write as one log line.
///
/// File names, server answers and error texts reach the log; a name holding a newline would
/// otherwise write a second, forged line, and an ESC would drive the operator's terminal.
/// Control characters are written as escapes (`\n`, `\r`, `\t`, `\x1b`, `\u{85}`); everything
/// else, backslashes included, is kept as it is.
public enum LogEscaping {
    public static func line(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                out += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
            }
        }
        return out
    }

    /// C0 controls, DEL, C1 controls (U+0080–U+009F, which some terminals obey) and the Unicode
    /// line and paragraph separators (which some log viewers break lines at).
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || (v >= 0x7f && v <= 0x9f) || v == 0x2028 || v == 0x2029
    }
}
