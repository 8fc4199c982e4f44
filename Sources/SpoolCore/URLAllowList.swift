/// Decides whether an item's own upload URL (sidecar `"url"`) may be used: docs/http.md "Per-item URLs".
///
/// A URL is allowed when it starts with one of the operator's prefixes (`--allow-url`). A prefix
/// that does not end in `/` must be followed by `/`, `?`, `#` or nothing, so that
/// `https://a.example` does not admit `https://a.example.evil.net`. URLs with user info, `.` or
/// `..` segments (also percent-encoded), backslashes, spaces or control characters are refused,
/// since they could point somewhere the prefix does not say.
public struct URLAllowList: Equatable, Sendable {
    public var prefixes: [String]

    public init(_ prefixes: [String]) { self.prefixes = prefixes }

    /// nil when `url` may be used, else the reason it may not.
    public func refusal(for url: String) -> String? {
        guard HTTPOrigin(url) != nil else { return "its url '\(url)' is not an absolute http(s) URL" }
        if let problem = URLAllowList.suspicious(url) { return "its url '\(url)' is refused: \(problem)" }
        guard !prefixes.isEmpty else { return "it names its own url '\(url)' but no --allow-url prefix is given" }
        for prefix in prefixes where url.hasPrefix(prefix) {
            if prefix.hasSuffix("/") { return nil }
            let next = url.dropFirst(prefix.count).first
            if next == nil || next == "/" || next == "?" || next == "#" { return nil }
        }
        return "its url '\(url)' does not start with an --allow-url prefix"
    }

    static func suspicious(_ url: String) -> String? {
        for scalar in url.unicodeScalars where scalar.value <= 0x20 || scalar.value == 0x7f || scalar == "\\" {
            return "it contains a space, a control character or a backslash"
        }
        let afterScheme = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        if afterScheme.count > 2, afterScheme[2].contains("@") { return "it carries user info" }
        let path = url.prefix { $0 != "?" && $0 != "#" }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(3) {
            let decoded = segment.lowercased().replacingPercentDot()
            if decoded == "." || decoded == ".." { return "it has a '.' or '..' path segment" }
        }
        return nil
    }
}

extension String {
    fileprivate func replacingPercentDot() -> String {
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: "%2e") {
            out += rest[..<range.lowerBound] + "."
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
