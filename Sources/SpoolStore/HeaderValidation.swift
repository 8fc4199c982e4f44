/// Checks that a header given by a user (flag or sidecar) can go on the wire unchanged.
public enum HeaderValidation {
    /// Headers spoold sets itself; a user value would break the request or its idempotency.
    public static let reserved: Set<String> = ["content-length", "transfer-encoding", "host", "idempotency-key", "connection", "expect"]

    public static func isValid(name: String, value: String) -> Bool {
        guard !name.isEmpty, !reserved.contains(name.lowercased()) else { return false }
        let tchar = Set("!#$%&'*+-.^_`|~".utf8)
        for c in name.utf8 where !(c.isAlnum || tchar.contains(c)) { return false }
        for c in value.utf8 where c == 0x0d || c == 0x0a || c == 0 { return false }
        return true
    }

    /// Parses `Name: value` as given to `--header`.
    public static func parse(_ text: String) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = String(text[..<colon]).trimmingSpaces
        let value = String(text[text.index(after: colon)...]).trimmingSpaces
        return isValid(name: name, value: value) ? (name, value) : nil
    }
}

extension UInt8 {
    fileprivate var isAlnum: Bool { (self >= 48 && self <= 57) || (self >= 65 && self <= 90) || (self >= 97 && self <= 122) }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
