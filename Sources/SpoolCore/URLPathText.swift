/// The path of an upload URL as the log shows it once per upload (`uploaded ID to /cams/7/fox.jpg`):
/// what an operator can match against the store (an object key, a receiver's path) where the id
/// keeps only an ASCII hint of the name.
///
/// No scheme, host, query or fragment: the host is in the start-up line, and a query may carry a
/// credential (a presigned URL). Percent-escapes are decoded when the result is UTF-8 text
/// (`Gr%C3%BC%C3%9Fe.txt` reads `Grüße.txt`), control characters then escaped as in any log line;
/// a path whose bytes are not UTF-8 is shown as it was sent.
public enum URLPathText {
    public static func display(_ url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        var path = rest[slash...]
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard let decoded = percentDecoded(path.utf8) else { return LogEscaping.line(String(path)) }
        return LogEscaping.line(decoded)
    }

    /// Nil when an escape is malformed or the bytes are not UTF-8.
    static func percentDecoded(_ utf8: Substring.UTF8View) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 65...70: c - 55
        case 97...102: c - 87
        default: nil
        }
    }
}
