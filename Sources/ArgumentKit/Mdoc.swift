/// Writing mdoc(7), the BSD manual macros man(1) and mandoc read: text escaped so that nothing a
/// help text holds is taken for a request, one sentence per line, macro arguments quoted.
struct Mdoc {
    private(set) var lines: [String] = []

    /// `.Dd`'s form: `November 26, 2026` from `2026-11-26`.
    static func date(_ isoDate: String) -> String {
        let parts = isoDate.split(separator: "-").compactMap { Int($0) }
        let months = [
            "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
            "December",
        ]
        guard parts.count == 3, (1...12).contains(parts[1]) else { return isoDate }
        return "\(months[parts[1] - 1]) \(parts[2]), \(parts[0])"
    }

    /// A request line: `.Sh NAME`, `.Fl -spool`.
    mutating func macro(_ name: String, _ arguments: String...) {
        macro(name, arguments)
    }

    mutating func macro(_ name: String, _ arguments: [String]) {
        lines.append(([".\(name)"] + arguments).joined(separator: " "))
    }

    /// Prose: escaped, one sentence per line (mdoc spaces sentences by their line ends), a long
    /// sentence broken between words so no line passes 80 bytes.
    mutating func text(_ prose: String) {
        for sentence in Mdoc.sentences(prose) {
            var line = ""
            for word in sentence.split(separator: " ") {
                let escaped = Mdoc.escaped(String(word))
                if !line.isEmpty, line.utf8.count + 1 + escaped.utf8.count > 80 {
                    lines.append(Mdoc.guarded(line))
                    line = ""
                }
                line += (line.isEmpty ? "" : " ") + escaped
            }
            if !line.isEmpty { lines.append(Mdoc.guarded(line)) }
        }
    }

    /// A line kept as it is, in a literal display.
    mutating func literal(_ line: String) {
        lines.append(line.isEmpty ? "" : Mdoc.textLine(line))
    }

    mutating func raw(_ line: String) { lines.append(line) }

    var document: String { lines.joined(separator: "\n") + "\n" }

    /// A macro argument, quoted so it is never read as a macro name or a delimiter: `"a b"`.
    /// Inside quotes a double quote is written twice.
    static func quoted(_ text: String) -> String {
        "\"" + escaped(text).replacing("\"", with: "\"\"") + "\""
    }

    /// Backslashes written as `\e`, and every character beyond ASCII as its `\[uXXXX]` escape, which
    /// mandoc and groff read alike whatever the page's encoding is taken for; roff reads nothing
    /// else in text specially except at a line's start.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                out += "\\e"
            } else if scalar.isASCII {
                out.unicodeScalars.append(scalar)
            } else {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        return out
    }

    /// A text line: escaped, and guarded by `\&` where its first character would make it a request.
    static func textLine(_ text: String) -> String { guarded(escaped(text)) }

    /// An escaped line, with `\&` before a first character that would make it a request.
    static func guarded(_ line: String) -> String {
        if let first = line.first, first == "." || first == "'" { return "\\&" + line }
        return line
    }

    /// Splits prose after `. `, `? ` or `! ` where the next word starts with a capital letter or a
    /// digit, and at line breaks; collapses runs of spaces, and trims each piece.
    static func sentences(_ prose: String) -> [String] {
        var pieces: [String] = []
        for paragraphLine in prose.split(separator: "\n") {
            let words = paragraphLine.split(separator: " ")
            var current: [Substring] = []
            for (index, word) in words.enumerated() {
                current.append(word)
                guard index + 1 < words.count, let last = word.last, ".?!".contains(last), word.count > 1 else { continue }
                // `e.g.` and `i.e.` do not end a sentence.
                if word.hasSuffix("e.g.") || word.hasSuffix("i.e.") || word.hasSuffix("etc.") { continue }
                if let next = words[index + 1].first, next.isUppercase || next.isNumber {
                    pieces.append(current.joined(separator: " "))
                    current = []
                }
            }
            if !current.isEmpty { pieces.append(current.joined(separator: " ")) }
        }
        return pieces
    }
}
