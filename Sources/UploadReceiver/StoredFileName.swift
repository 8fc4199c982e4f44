/// The file name a stored body gets: `<index>-<name>`, where name is the last path component of
/// the request-target, percent-decoded, with every Unicode scalar outside `[A-Za-z0-9._-]`
/// replaced by `_`, capped at 200 characters; `body` when that leaves nothing.
///
/// Examples: `/up/my%20file.txt` as request 3 → `3-my_file.txt`;
/// `/up/r%C3%A9sum%C3%A9.pdf?x=1` → `0-r_sum_.pdf`; `/up/` → `0-body`.
enum StoredFileName {
    static let maximumNameLength = 200

    static func make(index: Int, target: String) -> String {
        "\(index)-\(sanitizedName(of: target))"
    }

    /// The sanitised last path component of `target` (without query or fragment).
    static func sanitizedName(of target: String) -> String {
        let decoded = String(decoding: percentDecoded(lastPathComponent(of: target)), as: UTF8.self)
        var name = ""
        for scalar in decoded.unicodeScalars.prefix(maximumNameLength) {
            let allowed = scalar.isASCII && (isAlphanumeric(UInt8(scalar.value)) || "._-".unicodeScalars.contains(scalar))
            name.unicodeScalars.append(allowed ? scalar : "_")
        }
        return name.isEmpty ? "body" : name
    }

    /// The text after the last `/` of the target's path; empty for `*` or authority-form.
    static func lastPathComponent(of target: String) -> Substring {
        var path = Substring(target)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        if !path.hasPrefix("/") {
            // absolute-form: scheme://authority/path
            guard let scheme = path.range(of: "://") else { return "" }
            let afterAuthority = path[scheme.upperBound...]
            guard let slash = afterAuthority.firstIndex(of: "/") else { return "" }
            path = afterAuthority[slash...]
        }
        guard let lastSlash = path.lastIndex(of: "/") else { return path }
        return path[path.index(after: lastSlash)...]
    }

    /// Bytes with each valid `%XX` replaced by the byte it encodes; invalid escapes stay as is.
    static func percentDecoded(_ text: Substring) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count,
               let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
    }
}
