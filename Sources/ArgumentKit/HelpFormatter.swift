/// Lays out help text from the same specs the parser reads, so the two cannot disagree.
///
/// Layout: a usage line, the abstract, aligned `Arguments:` and `Options:` tables, then the
/// discussion. Lines wrap at `width` columns (counted in characters) where words allow.
enum HelpFormatter {
    static let width = 100
    /// Labels longer than this put their help on the next line instead of widening the table.
    static let maximumLabelWidth = 30
    static let indent = "  "
    static let gap = "  "

    static func commandHelp(_ spec: CommandSpec, program: String) -> String {
        let invocation = spec.name.isEmpty ? program : program + " " + spec.name
        var sections: [String] = [usageLines(spec, invocation: invocation)]
        if !spec.abstract.isEmpty { sections.append(wrapPreservingLines(spec.abstract)) }

        let argumentRows = spec.positionals.map { ($0.usageForm, $0.help) }
        let optionRows = (spec.options + [helpOption]).map { (optionLabel($0), optionHelp($0)) }
        let labelWidth = columnWidth(for: (argumentRows + optionRows).map(\.0))
        if !argumentRows.isEmpty { sections.append("Arguments:\n" + table(argumentRows, labelWidth: labelWidth)) }
        sections.append("Options:\n" + table(optionRows, labelWidth: labelWidth))

        if let discussion = spec.discussion, !discussion.isEmpty { sections.append(wrapPreservingLines(discussion)) }
        return sections.joined(separator: "\n\n")
    }

    static func overview(_ program: ProgramSpec) -> String {
        var usage = "Usage: \(program.name) <command> [options]"
        for option in program.options {
            usage += "\n       \(program.name) --\(option.name)" + (option.kind == .flag ? "" : " " + option.valueName)
        }
        var sections = [usage]
        if !program.abstract.isEmpty { sections.append(wrapPreservingLines(program.abstract)) }
        let rows = program.commands.map { ($0.name, $0.abstract) }
        if !rows.isEmpty {
            sections.append("Commands:\n" + table(rows, labelWidth: columnWidth(for: rows.map(\.0))))
        }
        if !program.options.isEmpty {
            let optionRows = ([helpOption] + program.options).map { (optionLabel($0), optionHelp($0)) }
            sections.append("Options:\n" + table(optionRows, labelWidth: columnWidth(for: optionRows.map(\.0))))
        }
        if let footer = program.footer, !footer.isEmpty { sections.append(wrapPreservingLines(footer)) }
        return sections.joined(separator: "\n\n")
    }

    /// Listed in every command's options; the parser handles it before consulting the spec.
    static let helpOption = OptionSpec.flag("help", short: "h", help: "Show this help.")

    static func usageLines(_ spec: CommandSpec, invocation: String) -> String {
        let forms: [String]
        if let usage = spec.usage {
            forms = usage.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        } else {
            forms = [(["[options]"] + spec.positionals.map(\.usageForm)).joined(separator: " ")]
        }
        let continuation = String(repeating: " ", count: "Usage: ".count)
        return forms.enumerated().map { index, form in
            (index == 0 ? "Usage: " : continuation) + invocation + " " + form
        }.joined(separator: "\n")
    }

    /// `-s, --spool DIR`, or `    --retries N` when there is no short name, so long names align.
    static func optionLabel(_ option: OptionSpec) -> String {
        let short = option.short.map { "-\($0), " } ?? "    "
        let value = option.kind == .flag ? "" : " " + option.valueName
        return short + "--" + option.name + value
    }

    static func optionHelp(_ option: OptionSpec) -> String {
        var parts = [option.help]
        if option.kind == .repeatedValue { parts.append("(repeatable)") }
        if let defaultDescription = option.defaultDescription { parts.append("(default: \(defaultDescription))") }
        return parts.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// The widest label that fits; an overlong label goes on its own line rather than pushing
    /// every other row's help to the right.
    static func columnWidth(for labels: [String]) -> Int {
        labels.map(\.count).filter { $0 <= maximumLabelWidth }.max() ?? maximumLabelWidth
    }

    /// Two-column rows; the help column wraps under itself.
    static func table(_ rows: [(label: String, help: String)], labelWidth: Int) -> String {
        let helpColumn = indent.count + labelWidth + gap.count
        let hangingIndent = String(repeating: " ", count: helpColumn)
        var lines: [String] = []
        for row in rows {
            let helpLines = wrap(row.help, width: width - helpColumn)
            let label = indent + row.label
            if row.label.count > labelWidth || helpLines.isEmpty {
                lines.append(label)
                lines += helpLines.map { hangingIndent + $0 }
            } else {
                let padding = String(repeating: " ", count: labelWidth - row.label.count)
                lines.append(label + padding + gap + helpLines[0])
                lines += helpLines.dropFirst().map { hangingIndent + $0 }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Keeps the author's lines as written (tables of exit codes stay tables); only a line
    /// longer than `width` is wrapped, under its own leading indentation.
    static func wrapPreservingLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            if line.count <= width { return String(line) }
            let leading = String(line.prefix { $0 == " " })
            let wrapped = wrap(String(line.dropFirst(leading.count)), width: width - leading.count)
            return wrapped.isEmpty ? "" : wrapped.map { leading + $0 }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Greedy word wrap on spaces and line breaks. A word longer than `width` gets a line of
    /// its own, unbroken.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if current.isEmpty {
                current = String(word)
            } else if current.count + 1 + word.count <= width {
                current += " " + word
            } else {
                lines.append(current)
                current = String(word)
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}
