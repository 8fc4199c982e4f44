/// Keeps secrets in URLs out of everything spoold writes for people to read: log lines, stderr
/// messages, and the error texts kept in an item's json.
///
/// Presigned URLs carry their credentials in the query (`X-Amz-Signature`, `token=`), and a URL
/// may carry `user:password@`. Both are replaced by `REDACTED`; the query's names are kept, so
/// an operator still sees which parameters were sent.
public enum LogRedaction {
    public static let placeholder = "REDACTED"

    /// Redacts every URL (`scheme://...`) found in `text`; the rest is kept as it is.
    ///
    /// A URL ends at white space, a quote or `<>`; trailing `)`, `,`, `;` and `.` are taken as
    /// the sentence's, not the URL's.
    public static func urls(in text: String) -> String {
        // A byte scan first: nearly every line has no URL, and `String.contains` of a string
        // goes through the generic (and per-line costly) substring search.
        guard mayContainURL(text) else { return text }
        var out = ""
        var rest = Substring(text)
        while let marker = rest.firstRange(of: "://") {
            // The scheme: the letters, digits, '+', '-' and '.' right before "://".
            var schemeStart = marker.lowerBound
            while schemeStart > rest.startIndex {
                let previous = rest.index(before: schemeStart)
                guard isSchemeCharacter(rest[previous]) else { break }
                schemeStart = previous
            }
            var end = rest[marker.upperBound...].firstIndex(where: endsURL) ?? rest.endIndex
            while end > marker.upperBound, ")],;.".contains(rest[rest.index(before: end)]) {
                end = rest.index(before: end)
            }
            out += rest[..<schemeStart]
            if schemeStart == marker.lowerBound {
                out += rest[marker]  // no scheme: not a URL
            } else {
                out += url(String(rest[schemeStart..<end]))
                rest = rest[end...]
                continue
            }
            rest = rest[marker.upperBound...]
        }
        return out + rest
    }

    /// `https://user:secret@host/x?token=abc&id=7` → `https://REDACTED@host/x?token=REDACTED&id=REDACTED`.
    ///
    /// Every query value is redacted, not only well-known names: spoold cannot know which of a
    /// server's parameters are secret. A parameter without `=` is redacted whole. A fragment is
    /// treated like a query.
    public static func url(_ text: String) -> String {
        guard let scheme = text.firstRange(of: "://") else { return text }
        let authorityStart = scheme.upperBound
        let rest = text[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var out = String(text[..<authorityStart])
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            out += placeholder + String(rest[at..<authorityEnd])
        } else {
            out += rest[..<authorityEnd]
        }
        let tail = rest[authorityEnd...]
        let queryStart = tail.firstIndex { $0 == "?" || $0 == "#" } ?? tail.endIndex
        out += tail[..<queryStart]
        var index = queryStart
        while index < tail.endIndex {
            let separator = tail[index]  // '?' or '#'
            let partStart = tail.index(after: index)
            let partEnd = separator == "?" ? (tail[partStart...].firstIndex(of: "#") ?? tail.endIndex) : tail.endIndex
            out.append(separator)
            out += redactedParameters(tail[partStart..<partEnd])
            index = partEnd
        }
        return out
    }

    /// `a=1&b=2` → `a=REDACTED&b=REDACTED`; empty values stay empty.
    static func redactedParameters(_ query: Substring) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
            guard !parameter.isEmpty else { return "" }
            guard let eq = parameter.firstIndex(of: "=") else { return placeholder }
            let value = parameter[parameter.index(after: eq)...]
            return String(parameter[...eq]) + (value.isEmpty ? "" : placeholder)
        }.joined(separator: "&")
    }

    /// Whether `text` holds the bytes `://` (a superset of where `firstRange(of: "://")` finds it).
    static func mayContainURL(_ text: String) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in text.utf8 {
            if byte == UInt8(ascii: "/"), previous == (UInt8(ascii: ":"), UInt8(ascii: "/")) { return true }
            previous = (previous.1, byte)
        }
        return false
    }

    static func isSchemeCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "+" || c == "-" || c == ".")
    }

    static func endsURL(_ c: Character) -> Bool {
        c.isWhitespace || c == "'" || c == "\"" || c == "<" || c == ">" || c == "`"
    }
}
