/// Turns `--url` into the URL for one item.
///
/// A URL ending in `/` gets the item's original name appended, unless it holds `{name}` or
/// `{id}`, which are substituted. The name is a path below incoming/ (`2026-11-23/cam7/fox.jpg`):
/// each segment is percent-encoded and the slashes are kept. The date parts `{date}`
/// (`YYYY-MM-DD`), `{year}`, `{month}`, `{day}` and `{hour}` are the item's creation time in UTC,
/// as its json records it, never the clock at upload: every attempt and every resumed multipart
/// pass of an item reaches the same URL (a key that moved would orphan the parts already sent).
/// `{host}` is the machine's host name, as the daemon read it at start: one configuration for a
/// whole fleet (`s3://bucket/{host}/`) keeps each host's objects apart.
public struct URLTemplate: Equatable, Sendable {
    public let template: String
    /// What `{host}` stands for (sent percent-encoded as one path segment).
    public let host: String

    /// Every placeholder, in the order the help and the errors list them.
    public static let placeholders = ["name", "id", "host", "date", "year", "month", "day", "hour"]

    /// Whether a template ending in `/` without `{name}` or `{id}` gets the name appended (not a
    /// tus endpoint's: every item is created at the endpoint itself).
    public let appendsName: Bool

    /// The template split once, not on every upload.
    private let parts: [Token]

    /// - Parameters:
    ///   - host: the machine's host name, for `{host}`.
    ///   - appendsName: false for a tus endpoint.
    public init(_ template: String, host: String = "", appendsName: Bool = true) {
        self.template = template
        self.host = host
        self.appendsName = appendsName
        self.parts = URLTemplate.tokens(template)
    }

    /// Whether `{host}` is used: the daemon refuses it on a machine whose host name is empty,
    /// where every host of a fleet would share one prefix, the very thing it is there to prevent.
    public var usesHost: Bool { parts.contains(.placeholder("host")) }

    /// A `{word}` in a template that is not one of `placeholders` (a typo like `{nmae}` would
    /// otherwise reach the server literally, on every upload).
    public struct UnknownPlaceholder: Error, Equatable, CustomStringConvertible {
        public var placeholder: String
        public var description: String {
            "unknown placeholder {\(placeholder)} (known: "
                + URLTemplate.placeholders.map { "{\($0)}" }.joined(separator: " ") + ")"
        }
    }

    /// Refuses a template with an unknown `{word}`. A brace that does not enclose a word
    /// (`{}`, `{a b}`, a lone `{`) is not a placeholder and stays literal, as before.
    public static func validate(_ template: String) throws(UnknownPlaceholder) {
        for case .placeholder(let word) in tokens(template) where !placeholders.contains(String(word)) {
            throw UnknownPlaceholder(placeholder: String(word))
        }
    }

    public func url(id: ItemID, originalName: String, createdAt: @autoclosure () -> Timestamp) -> String {
        url(id: id, originalNameBytes: Array(originalName.utf8), createdAt: createdAt())
    }

    /// The same from the name's bytes (a name that is not valid UTF-8 is sent as its own bytes).
    /// `createdAt` is read only if the template has a date part (it parses the json's time).
    public func url(id: ItemID, originalNameBytes: [UInt8], createdAt: @autoclosure () -> Timestamp) -> String {
        let name = URLTemplate.encodePath(originalNameBytes)
        lazy var time = CivilTime(createdAt())
        var named = false
        var out = ""
        for token in parts {
            switch token {
            case .literal(let text): out += text
            case .placeholder("name"): out += name; named = true
            case .placeholder("id"): out += id.rawValue; named = true
            case .placeholder("host"): out += URLTemplate.encodePathSegment(host)
            case .placeholder("date"): out += "\(pad(time.year, 4))-\(pad(time.month, 2))-\(pad(time.day, 2))"
            case .placeholder("year"): out += pad(time.year, 4)
            case .placeholder("month"): out += pad(time.month, 2)
            case .placeholder("day"): out += pad(time.day, 2)
            case .placeholder("hour"): out += pad(time.hour, 2)
            case .placeholder(let word): out += "{\(word)}"  // refused at start-up by `validate`
            }
        }
        return appendsName && !named && template.hasSuffix("/") ? out + name : out
    }

    /// A piece of a template: text as it is, or the word of a `{word}` (letters, digits, `_`).
    enum Token: Equatable {
        case literal(Substring)
        case placeholder(Substring)
    }

    static func tokens(_ template: String) -> [Token] {
        var tokens: [Token] = []
        var literalStart = template.startIndex
        var i = template.startIndex
        while let open = template[i...].firstIndex(of: "{") {
            let wordStart = template.index(after: open)
            let wordEnd = template[wordStart...].firstIndex { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_")) }
            guard let wordEnd, wordEnd > wordStart, template[wordEnd] == "}" else {
                i = wordStart
                continue
            }
            if literalStart < open { tokens.append(.literal(template[literalStart..<open])) }
            tokens.append(.placeholder(template[wordStart..<wordEnd]))
            i = template.index(after: wordEnd)
            literalStart = i
        }
        if literalStart < template.endIndex { tokens.append(.literal(template[literalStart...])) }
        return tokens
    }

    /// Each `/`-separated segment encoded by `encodePathSegment`, the slashes kept. A `.` or `..`
    /// segment (never made by spoold, but a json can be edited) is encoded too, so no name can
    /// climb out of the URL's path.
    public static func encodePath(_ path: String) -> String { encodePath(Array(path.utf8)) }

    public static func encodePath(_ path: [UInt8]) -> String {
        path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { segment in
            segment.allSatisfy({ $0 == UInt8(ascii: ".") }) && (1...2).contains(segment.count)
                ? String(repeating: "%2E", count: segment.count) : encodePathSegment(segment)
        }.joined(separator: "/")
    }

    /// RFC 3986 unreserved characters stay; every other byte of the UTF-8 becomes `%XX`.
    public static func encodePathSegment(_ text: String) -> String { encodePathSegment(text.utf8) }

    public static func encodePathSegment(_ bytes: some Sequence<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for c in bytes {
            let unreserved = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
                || c == 45 || c == 46 || c == 95 || c == 126
            if unreserved { out.append(c) } else { out += [37, hex[Int(c >> 4)], hex[Int(c & 15)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// `value` in decimal, zero-padded to `width` digits.
private func pad(_ value: Int, _ width: Int) -> String {
    let s = String(value)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}
