/// The first bytes of an answer's body as one printable line: what the attempt history keeps.
public enum AnswerExcerpt {
    /// Bytes of the answer the line is made from.
    public static let length = 512

    /// The first `length` bytes, decoded as UTF-8 (invalid bytes replaced), control characters
    /// as spaces, without spaces at either end; nil for an empty answer.
    public static func line<Bytes: Collection>(_ bytes: Bytes) -> String? where Bytes.Element == UInt8 {
        guard !bytes.isEmpty else { return nil }
        let text = String(decoding: bytes.prefix(length), as: UTF8.self)
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(scalar.value < 32 || scalar.value == 127 ? " " : scalar)
        }
        // Foundation's `.whitespaces`: the space separators (Unicode Zs) and the tab.
        func isSpace(_ s: Unicode.Scalar) -> Bool { s.properties.generalCategory == .spaceSeparator || s == "\t" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isSpace($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
