/// One line of an answer's head as libcurl hands it to a header callback, reduced to what an
/// attempt keeps: a status line (a new response begins, e.g. after `100 Continue`) or the value
/// of `Retry-After`, `Location`, `ETag`, `Content-Length` or one of the tus headers (`TusHeaders`).
///
/// Read from the bytes in place: the callback runs for every header line of every answer, and
/// building a `String` per line (lowercased, trimmed by Foundation) was ~5 % of the curl
/// transport's CPU per small item. A String is made only for the values kept.
public enum AnswerHeaderLine: Equatable, Sendable {
    case statusLine
    case retryAfter(String)
    case location(String)
    case etag(String)
    case contentLength(String)
    case tus(TusHeaders.Field, String)
    /// Any other header, a malformed line or the blank line ending the head.
    case other

    /// Lines are read up to this many bytes (a longer value is cut there).
    public static let lengthLimit = 8192

    /// Parses `bytes`: a line starting `HTTP/` is a status line; otherwise the name before the
    /// first `:` is compared without regard to ASCII case, and the value after it is trimmed of
    /// Unicode white space and line ends at both sides (as Foundation's `.whitespacesAndNewlines`).
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        let line = UnsafeBufferPointer(rebasing: bytes.prefix(AnswerHeaderLine.lengthLimit))
        if AnswerHeaderLine.hasPrefix(line, "HTTP/") {
            self = .statusLine
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            self = .other
            return
        }
        let name = UnsafeBufferPointer(rebasing: line[..<colon])
        let make: (String) -> AnswerHeaderLine
        if AnswerHeaderLine.isName(name, "retry-after") {
            make = AnswerHeaderLine.retryAfter
        } else if AnswerHeaderLine.isName(name, "location") {
            make = AnswerHeaderLine.location
        } else if AnswerHeaderLine.isName(name, "etag") {
            make = AnswerHeaderLine.etag
        } else if AnswerHeaderLine.isName(name, "content-length") {
            make = AnswerHeaderLine.contentLength
        } else if let field = AnswerHeaderLine.tusField(name) {
            make = { AnswerHeaderLine.tus(field, $0) }
        } else {
            self = .other
            return
        }
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self)
        self = make(AnswerHeaderLine.trimmed(value))
    }

    /// The tus header `name` is, if it is one: looked for only among names of their lengths that
    /// start with `t` or `u`, so other headers cost one or two comparisons.
    private static func tusField(_ name: UnsafeBufferPointer<UInt8>) -> TusHeaders.Field? {
        guard name.count >= 11, name.count <= 22, let first = name.first, first | 0x20 == UInt8(ascii: "t") || first | 0x20 == UInt8(ascii: "u")
        else { return nil }
        for field in TusHeaders.Field.allCases where field.rawValue.utf8.count == name.count {
            let matches = field.rawValue.utf8.withContiguousStorageIfAvailable { lowercase in
                zip(name, lowercase).allSatisfy { byte, expected in
                    (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) == expected
                }
            } ?? false
            if matches { return field }
        }
        return nil
    }

    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        for i in 0..<prefix.utf8CodeUnitCount where bytes[i] != prefix.utf8Start[i] { return false }
        return true
    }

    /// `name` equals `lowercase` (ASCII lowercase letters and '-') regardless of ASCII case.
    private static func isName(_ name: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard name.count == lowercase.utf8CodeUnitCount else { return false }
        for i in 0..<name.count {
            let byte = name[i]
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            if folded != lowercase.utf8Start[i] { return false }
        }
        return true
    }

    /// `value` without white space at either end: the set of swift-corelibs-foundation's
    /// `.whitespacesAndNewlines`, which is Unicode's White_Space property plus U+200B (ZERO WIDTH
    /// SPACE, a space separator in older Unicode versions).
    public static func trimmedValue(_ value: String) -> String { trimmed(value) }

    static func trimmed(_ value: String) -> String {
        let scalars = value.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isSpace($0) })!
        return String(scalars[first...last])
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.value == 0x200B
    }
}
