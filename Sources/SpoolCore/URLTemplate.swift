/// Turns `--url` into the URL for one item.
///
/// A URL ending in `/` gets the item's original name appended; `{name}` and `{id}` are
/// substituted. The name is a path below incoming/ (`2026-11-23/cam7/fox.jpg`): each segment is
/// percent-encoded and the slashes are kept.
public struct URLTemplate: Equatable, Sendable {
    public let template: String

    public init(_ template: String) { self.template = template }

    public func url(id: ItemID, originalName: String) -> String {
        url(id: id, originalNameBytes: Array(originalName.utf8))
    }

    /// The same from the name's bytes (a name that is not valid UTF-8 is sent as its own bytes).
    public func url(id: ItemID, originalNameBytes: [UInt8]) -> String {
        let name = URLTemplate.encodePath(originalNameBytes)
        if template.contains("{name}") || template.contains("{id}") {
            return template.replacingAll("{name}", with: name).replacingAll("{id}", with: id.rawValue)
        }
        return template.hasSuffix("/") ? template + name : template
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

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
