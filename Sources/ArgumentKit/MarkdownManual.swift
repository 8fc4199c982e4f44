/// A manual page in mdoc(7) from a Markdown document, so that a page and the Markdown the project
/// keeps (docs/spool.md) say the same thing. The Markdown this project writes, no more:
/// `###` headings, paragraphs, fenced code, `-` and `1.` lists (with indented continuations,
/// code and paragraphs inside), pipe tables, and inline code, `**strong**`, `*emphasis*` and
/// `[links](target)`. Anything else is kept as text.
public enum MarkdownManual {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The lines under `## heading` up to the next `## ` heading (without the heading itself).
    public static func section(_ heading: String, of markdown: String) throws -> String {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == "## " + heading }) else {
            throw Failure(description: "no section '## \(heading)'")
        }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        return lines[(start + 1)..<end].joined(separator: "\n")
    }

    /// The body of a document titled by its one `# ` heading (docs/spool.md): the lines after the
    /// title, each heading outside fenced code one level deeper (`## X` becomes `### X`), so the
    /// document's sections become the page's subsections.
    public static func document(_ markdown: String) throws -> String {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        guard let title = lines.firstIndex(where: { $0.hasPrefix("# ") }) else {
            throw Failure(description: "no '# ' title")
        }
        var fenced = false
        return lines[(title + 1)...].map { line in
            if line.hasPrefix("```") { fenced.toggle() }
            return !fenced && line.hasPrefix("#") ? "#" + line : String(line)
        }.joined(separator: "\n")
    }

    /// - Parameters:
    ///   - markdown: the page's body; it goes under DESCRIPTION, its `###` headings become
    ///     subsections.
    public static func page(
        name: String, section: Int, summary: String, markdown: String, date: String, source: String,
        seeAlso: [(name: String, section: Int)] = []
    ) throws -> ManualFormatter.Page {
        var page = Mdoc()
        page.raw(".\\\" Generated from Markdown (docs/spool.md in the project); edit that, not this file.")
        page.macro("Dd", Mdoc.date(date))
        page.macro("Dt", name.uppercased(), "\(section)")
        page.macro("Os")
        page.raw(".\\\" \(source)")
        page.macro("Sh", "NAME")
        page.macro("Nm", Mdoc.quoted(name))
        page.macro("Nd", Mdoc.quoted(summary))
        page.macro("Sh", "DESCRIPTION")
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var writer = Writer(page: page, headings: Set(lines.compactMap(Writer.subsectionTitle)))
        writer.blocks(lines)
        page = writer.page
        ManualFormatter.seeAlsoSection(&page, seeAlso)
        return ManualFormatter.Page(fileName: "\(name).\(section)", text: page.document)
    }

    struct Writer {
        var page: Mdoc
        /// Subsection titles, for links that point inside the page (`.Sx`).
        var headings: Set<String>
        /// A paragraph ended: the next one needs `.Pp`.
        var afterParagraph = false

        static func subsectionTitle(_ line: String) -> String? {
            guard line.hasPrefix("### ") else { return nil }
            return plain(String(line.dropFirst(4)))
        }

        /// A heading's or a link's text without its markup: `` The `.json` file `` reads `The .json file`.
        static func plain(_ text: String) -> String {
            text.filter { $0 != "`" && $0 != "*" }
        }

        mutating func blocks(_ lines: [String]) {
            var index = 0
            var paragraph: [String] = []
            func flush(_ writer: inout Writer) {
                guard !paragraph.isEmpty else { return }
                writer.paragraph(paragraph.joined(separator: " "))
                paragraph = []
            }
            while index < lines.count {
                let line = lines[index]
                let trimmed = line.drop { $0 == " " }
                if trimmed.isEmpty {
                    flush(&self)
                    index += 1
                } else if let title = Writer.subsectionTitle(line) {
                    flush(&self)
                    page.macro("Ss", Mdoc.quoted(title))
                    afterParagraph = false
                    index += 1
                } else if trimmed.hasPrefix("```") {
                    flush(&self)
                    index = codeBlock(lines, from: index)
                } else if line.hasPrefix("|") {
                    flush(&self)
                    index = table(lines, from: index)
                } else if Writer.listMarker(line) != nil {
                    flush(&self)
                    index = list(lines, from: index)
                } else {
                    paragraph.append(String(trimmed))
                    index += 1
                }
            }
            flush(&self)
        }

        mutating func paragraph(_ text: String) {
            if afterParagraph { page.macro("Pp") }
            inline(Inline.parse(text))
            afterParagraph = true
        }

        /// A fenced block, kept line for line, its fence's indentation removed.
        mutating func codeBlock(_ lines: [String], from start: Int) -> Int {
            let indent = lines[start].prefix { $0 == " " }.count
            page.macro("Bd", "-literal", "-offset", "indent")
            var index = start + 1
            while index < lines.count, !lines[index].drop(while: { $0 == " " }).hasPrefix("```") {
                page.literal(String(lines[index].dropFirst(min(indent, lines[index].prefix { $0 == " " }.count))))
                index += 1
            }
            page.macro("Ed")
            afterParagraph = true
            return index + 1
        }

        /// A pipe table as a tagged list: the first cell is the tag; with two columns the second is
        /// the text, with more each further cell is a paragraph led by its column's header.
        mutating func table(_ lines: [String], from start: Int) -> Int {
            var index = start
            var rows: [[String]] = []
            while index < lines.count, lines[index].hasPrefix("|") {
                rows.append(Writer.cells(lines[index]))
                index += 1
            }
            guard rows.count >= 2 else { return index }
            let header = rows[0]
            page.macro("Bl", "-tag", "-width", "Ds")
            for row in rows.dropFirst(2) {
                page.macro("It", inlineArguments(Inline.parse(row.first ?? "")))
                for (column, cell) in row.enumerated().dropFirst() {
                    if column > 1 { page.macro("Pp") }
                    let lead = header.count > 2 && column < header.count ? Writer.plain(header[column]) + ": " : ""
                    inline(Inline.parse(lead + cell))
                }
            }
            page.macro("El")
            afterParagraph = true
            return index
        }

        static func cells(_ line: String) -> [String] {
            var cells: [String] = []
            var current = ""
            var inCode = false
            for character in line.dropFirst() {
                if character == "`" { inCode.toggle() }
                if character == "|" && !inCode {
                    cells.append(current.trimmingSpaces)
                    current = ""
                } else {
                    current.append(character)
                }
            }
            if !current.trimmingSpaces.isEmpty { cells.append(current.trimmingSpaces) }
            return cells
        }

        /// `- ` (a bullet) or `1. ` (a number), and the width of the marker.
        static func listMarker(_ line: String) -> (enumerated: Bool, width: Int)? {
            if line.hasPrefix("- ") { return (false, 2) }
            let digits = line.prefix { $0.isASCII && $0.isNumber }
            if !digits.isEmpty, line.dropFirst(digits.count).hasPrefix(". ") { return (true, digits.count + 2) }
            return nil
        }

        /// A list: each item is its marker's line, the lines indented under it (blank lines
        /// between included) and lines that simply continue it; its body is written as blocks.
        mutating func list(_ lines: [String], from start: Int) -> Int {
            guard let first = Writer.listMarker(lines[start]) else { return start + 1 }
            page.macro("Bl", first.enumerated ? "-enum" : "-bullet")
            var index = start
            while index < lines.count, let marker = Writer.listMarker(lines[index]), marker.enumerated == first.enumerated {
                var body = [String(lines[index].dropFirst(marker.width))]
                index += 1
                while index < lines.count {
                    let line = lines[index]
                    let indent = line.prefix { $0 == " " }.count
                    if line.isEmpty {
                        // A blank line belongs to the item only when an indented line follows.
                        let next = lines[(index + 1)...].first { !$0.isEmpty }
                        guard let next, next.hasPrefix("  ") else { break }
                        body.append("")
                    } else if indent >= 2 {
                        body.append(String(line.dropFirst(min(indent, marker.width))))
                    } else if Writer.listMarker(line) == nil, !line.hasPrefix("|"), !line.hasPrefix("#"), body.last != "" {
                        body.append(line)  // a lazy continuation
                    } else {
                        break
                    }
                    index += 1
                }
                page.macro("It")
                afterParagraph = false
                blocks(body)
                while index < lines.count, lines[index].isEmpty,
                      let next = lines[(index + 1)...].first(where: { !$0.isEmpty }), Writer.listMarker(next) != nil {
                    index += 1
                }
            }
            page.macro("El")
            afterParagraph = true
            return index
        }

        /// Prose with inline markup: plain words on text lines, a sentence per line; each run of
        /// markup, with the words touching it, on a macro line of its own.
        mutating func inline(_ pieces: [(piece: Inline, spaced: Bool)]) {
            var words: [String] = []
            func flushWords(_ writer: inout Writer) {
                guard !words.isEmpty else { return }
                writer.page.text(words.joined(separator: " "))
                words = []
            }
            for cluster in Inline.clusters(pieces) {
                if cluster.count == 1, case .word(let word) = cluster[0] {
                    words.append(word)
                } else {
                    flushWords(&self)
                    let arguments = macroArguments(cluster, ownLine: true)
                    page.macro(arguments[0], Array(arguments.dropFirst()))
                }
            }
            flushWords(&self)
        }

        /// Inline pieces as the arguments of one macro line (`.It`'s tag), runs spaced apart;
        /// plain words after markup are led by `No`, so the markup's font ends before them.
        func inlineArguments(_ pieces: [(piece: Inline, spaced: Bool)]) -> [String] {
            var arguments: [String] = []
            for cluster in Inline.clusters(pieces) {
                var run = macroArguments(cluster, ownLine: false)
                if let first = run.first, first.hasPrefix("\""), let last = arguments.last, !last.hasPrefix("\"") {
                    run.insert("No", at: 0)
                }
                arguments += run
            }
            return arguments
        }

        /// One run of touching pieces, `So "code" Sc Ns "/b" ) ,`: inline code is quoted with
        /// `So`/`Sc` (an explicit scope: `Ql` would quote everything after it on the line), later
        /// pieces are joined to the earlier with `Ns`, closing punctuation follows as delimiters.
        /// On a line of its own (`ownLine`) the first element is the macro to call (`No` for
        /// plain text).
        func macroArguments(_ cluster: [Inline], ownLine: Bool) -> [String] {
            var arguments: [String] = []
            // `(` touching markup goes inside its macro as an opening delimiter: `So ( "x" Sc`.
            var opening: [String] = []
            for (index, piece) in cluster.enumerated() {
                switch piece {
                case .word(let word):
                    if index == 0, cluster.count > 1, word.allSatisfy({ "([".contains($0) }) {
                        opening = word.map { String($0) }
                        continue
                    }
                    let body = word.reversed().drop { ".,:;)?!]".contains($0) }.reversed()
                    let closing = word.dropFirst(body.count).map { String($0) }
                    if !body.isEmpty { arguments += (arguments.isEmpty ? [] : ["Ns"]) + [Mdoc.quoted(String(body))] }
                    arguments += closing
                case .markup(let kind, let text):
                    let joined = arguments.isEmpty ? [] : ["Ns"]
                    switch kind {
                    case .code: arguments += joined + ["So"] + opening + [Mdoc.quoted(text), "Sc"]
                    case .strong: arguments += joined + ["Sy"] + opening + [Mdoc.quoted(text)]
                    case .emphasis: arguments += joined + ["Em"] + opening + [Mdoc.quoted(text)]
                    case .link where headings.contains(text): arguments += joined + ["Sx"] + opening + [Mdoc.quoted(text)]
                    case .link: arguments += joined + (opening.isEmpty && arguments.isEmpty && !ownLine ? [] : ["No"]) + opening + [Mdoc.quoted(text)]
                    }
                    opening = []
                }
            }
            if ownLine, let first = arguments.first, first.hasPrefix("\"") || first == "Ns" { arguments.insert("No", at: 0) }
            return arguments
        }
    }

    /// A word of text or a run of markup, with whether a space comes before it.
    enum Inline {
        enum Kind { case code, strong, emphasis, link }

        case word(String)
        case markup(Kind, String)

        /// Words and markup, each with whether a space came before it.
        static func parse(_ text: String) -> [(piece: Inline, spaced: Bool)] {
            var pieces: [(Inline, Bool)] = []
            var word = ""
            var spaced = false
            var rest = Substring(text)
            func flushWord() {
                if !word.isEmpty { pieces.append((.word(word), spaced)); spaced = false }
                word = ""
            }
            while let character = rest.first {
                if character == " " {
                    flushWord()
                    spaced = true
                    rest = rest.dropFirst()
                    continue
                }
                if let (kind, content, after) = markup(at: rest) {
                    flushWord()
                    pieces.append((.markup(kind, content), spaced))
                    spaced = false
                    rest = after
                    continue
                }
                word.append(character)
                rest = rest.dropFirst()
            }
            flushWord()
            return pieces
        }

        /// The markup starting at `text`, its plain content and what follows it.
        static func markup(at text: Substring) -> (Kind, String, Substring)? {
            if text.hasPrefix("`"), let end = text.dropFirst().firstIndex(of: "`") {
                return (.code, String(text[text.index(after: text.startIndex)..<end]), text[text.index(after: end)...])
            }
            if text.hasPrefix("**"), let end = text.dropFirst(2).firstRange(of: "**") {
                let content = text[text.index(text.startIndex, offsetBy: 2)..<end.lowerBound]
                return (.strong, Writer.plain(String(content)), text[end.upperBound...])
            }
            if text.hasPrefix("*"), let next = text.dropFirst().first, next != " ", next != "*",
               let end = text.dropFirst().firstIndex(of: "*"), text[text.index(before: end)] != " "
            {
                return (.emphasis, Writer.plain(String(text[text.index(after: text.startIndex)..<end])), text[text.index(after: end)...])
            }
            if text.hasPrefix("["), let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix("("),
               let end = text[close...].firstIndex(of: ")")
            {
                return (.link, Writer.plain(String(text[text.index(after: text.startIndex)..<close])), text[text.index(after: end)...])
            }
            return nil
        }

        /// Runs of pieces with no space between them (`(`, `code`, `),`), each run one unit.
        static func clusters(_ pieces: [(piece: Inline, spaced: Bool)]) -> [[Inline]] {
            var clusters: [[Inline]] = []
            for (piece, spaced) in pieces {
                if spaced || clusters.isEmpty { clusters.append([piece]) } else { clusters[clusters.count - 1].append(piece) }
            }
            return clusters
        }
    }
}

extension String {
    var trimmingSpaces: String { String(Substring(self).trimmingSpaces) }
}
