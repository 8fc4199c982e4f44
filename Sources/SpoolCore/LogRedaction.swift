/// Keeps secrets out of log lines.
public enum LogRedaction {
    /// `https://user:secret@host/x` → `https://***@host/x`: credentials in a URL's user info are
    /// never logged (headers are never logged at all).
    public static func url(_ text: String) -> String {
        guard let scheme = text.firstRange(of: "://") else { return text }
        let authorityStart = scheme.upperBound
        let rest = text[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<authorityStart]) + "***" + String(text[at...])
    }
}
