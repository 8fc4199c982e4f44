/// Resolves a URL reference (a redirect's `Location`) against the URL that answered, as RFC 3986
/// section 5.2 says, without Foundation.
public enum URLReference {
    /// The absolute form of `reference` relative to `base` (an absolute URL); nil when `base` has
    /// no scheme.
    public static func resolve(_ reference: String, against base: String) -> String? {
        guard let base = Parts(base), let baseScheme = base.scheme else { return nil }
        let ref = Parts(reference) ?? Parts(scheme: nil, authority: nil, path: "", query: nil, fragment: nil)
        var target = Parts(scheme: nil, authority: nil, path: "", query: nil, fragment: ref.fragment)
        if let scheme = ref.scheme {
            target.scheme = scheme
            target.authority = ref.authority
            target.path = removeDotSegments(ref.path)
            target.query = ref.query
        } else {
            target.scheme = baseScheme
            if ref.authority != nil {
                target.authority = ref.authority
                target.path = removeDotSegments(ref.path)
                target.query = ref.query
            } else {
                target.authority = base.authority
                if ref.path.isEmpty {
                    target.path = base.path
                    target.query = ref.query ?? base.query
                } else {
                    target.path = removeDotSegments(ref.path.hasPrefix("/") ? ref.path : merge(base, ref.path))
                    target.query = ref.query
                }
            }
        }
        return target.text
    }

    /// A URL split into its five parts (RFC 3986 appendix B).
    struct Parts {
        var scheme: String?
        var authority: String?
        var path: String
        var query: String?
        var fragment: String?

        init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
            (self.scheme, self.authority, self.path, self.query, self.fragment) = (scheme, authority, path, query, fragment)
        }

        init?(_ text: String) {
            var rest = Substring(text)
            if let hash = rest.firstIndex(of: "#") {
                fragment = String(rest[rest.index(after: hash)...])
                rest = rest[..<hash]
            }
            if let question = rest.firstIndex(of: "?") {
                query = String(rest[rest.index(after: question)...])
                rest = rest[..<question]
            }
            if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/"), let first = rest.first, first.isLetter,
               rest[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." })
            {
                scheme = String(rest[..<colon])
                rest = rest[rest.index(after: colon)...]
            }
            if rest.hasPrefix("//") {
                rest = rest.dropFirst(2)
                let end = rest.firstIndex(of: "/") ?? rest.endIndex
                authority = String(rest[..<end])
                rest = rest[end...]
            }
            path = String(rest)
        }

        var text: String {
            var out = ""
            if let scheme { out += scheme + ":" }
            if let authority { out += "//" + authority }
            out += path
            if let query { out += "?" + query }
            if let fragment { out += "#" + fragment }
            return out
        }
    }

    /// Section 5.2.3: the reference's path after the base's last `/`.
    static func merge(_ base: Parts, _ path: String) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return String(base.path[...slash]) + path
    }

    /// Section 5.2.4: `.` and `..` segments taken out.
    static func removeDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        var outputText: String { output.joined() }
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") || input == "/.." {
                input = input == "/.." ? "/" : input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return outputText
    }
}
