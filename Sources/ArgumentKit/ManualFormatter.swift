/// Manual pages in mdoc(7), made from the same `ProgramSpec` and `CommandSpec`s as `--help` (the
/// model: swift-argument-parser's `generate-manual`): one page for the program, with its
/// commands, and one per command, `PROGRAM-COMMAND(SECTION)`.
public enum ManualFormatter {
    /// One page: its file name (`spoold-run.8`) and its mdoc source.
    public struct Page: Sendable, Equatable {
        public var fileName: String
        public var text: String
    }

    /// - Parameters:
    ///   - date: `YYYY-MM-DD`, the pages' `.Dd` (kept fixed so that generating again changes nothing).
    ///   - source: the `.Os` line, e.g. `spoold 0.1.0`.
    ///   - seeAlso: other pages every page names, e.g. `("spoold-spool", 5)`.
    public static func pages(
        for program: ProgramSpec, section: Int, date: String, source: String, seeAlso: [(name: String, section: Int)] = []
    ) -> [Page] {
        let commandPages = program.commands.map { (name: pageName(program, $0), section: section) }
        var pages = [
            Page(
                fileName: "\(program.name).\(section)",
                text: programPage(program, section: section, date: date, source: source, seeAlso: seeAlso + commandPages)),
        ]
        for command in program.commands {
            let others = [(name: program.name, section: section)] + seeAlso
            pages.append(Page(
                fileName: "\(pageName(program, command)).\(section)",
                text: commandPage(command, of: program, section: section, date: date, source: source, seeAlso: others)))
        }
        return pages
    }

    static func pageName(_ program: ProgramSpec, _ command: CommandSpec) -> String { "\(program.name)-\(command.name)" }

    static func programPage(
        _ program: ProgramSpec, section: Int, date: String, source: String, seeAlso: [(name: String, section: Int)]
    ) -> String {
        var page = Mdoc()
        header(&page, name: program.name, section: section, date: date, source: source, summary: program.summary)
        page.macro("Sh", "SYNOPSIS")
        page.macro("Nm", Mdoc.quoted(program.name))
        page.macro("Ar", "command")
        page.macro("Op", "Ar", "options")
        for option in program.options {
            page.macro("Nm", Mdoc.quoted(program.name))
            page.macro("Fl", Mdoc.quoted("-" + option.name))
        }
        page.macro("Sh", "DESCRIPTION")
        page.text(strippingProgramPrefix(program.abstract, program: program.name))
        if let defaultCommand = program.defaultCommand {
            page.macro("Pp")
            page.text("Options without a command are those of the \(defaultCommand) command.")
        }
        if let footer = program.footer { discussion(&page, footer) }
        page.macro("Ss", "Commands")
        page.macro("Bl", "-tag", "-width", "Ds")
        for command in program.commands {
            page.macro("It", "Cm", Mdoc.quoted(command.name))
            page.text(command.abstract)
            page.text("See")
            page.macro("Xr", Mdoc.quoted(pageName(program, command)), "\(section)", ".")
        }
        page.macro("El")
        page.macro("Ss", "Options")
        optionList(&page, [HelpFormatter.helpOption] + program.options)
        seeAlsoSection(&page, seeAlso)
        return page.document
    }

    static func commandPage(
        _ command: CommandSpec, of program: ProgramSpec, section: Int, date: String, source: String,
        seeAlso: [(name: String, section: Int)]
    ) -> String {
        var page = Mdoc()
        header(&page, name: pageName(program, command), section: section, date: date, source: source, summary: command.abstract)
        page.macro("Sh", "SYNOPSIS")
        if let usage = command.usage {
            for form in usage.split(separator: "\n") {
                page.macro("Nm", Mdoc.quoted(program.name), "Cm", Mdoc.quoted(command.name))
                for word in form.split(separator: " ") { page.macro("Ar", Mdoc.quoted(String(word))) }
            }
        } else {
            page.macro("Nm", Mdoc.quoted(program.name), "Cm", Mdoc.quoted(command.name))
            page.macro("Op", "Ar", "options")
            for positional in command.positionals {
                let argument = ["Ar", Mdoc.quoted(positional.name)] + (positional.repeating ? ["..."] : [])
                if positional.optional { page.macro("Op", argument) } else { page.macro("Ar", Array(argument.dropFirst())) }
            }
        }
        page.macro("Sh", "DESCRIPTION")
        page.text(command.abstract)
        if let text = command.discussion { discussion(&page, text) }
        if !command.positionals.isEmpty {
            page.macro("Ss", "Arguments")
            page.macro("Bl", "-tag", "-width", "Ds")
            for positional in command.positionals {
                page.macro("It", "Ar", Mdoc.quoted(positional.name) + (positional.repeating ? " ..." : ""))
                page.text(positional.help)
            }
            page.macro("El")
        }
        page.macro("Ss", "Options")
        optionList(&page, command.options + [HelpFormatter.helpOption])
        seeAlsoSection(&page, seeAlso)
        return page.document
    }

    /// `.Dd`, `.Dt`, `.Os` and the NAME section.
    static func header(_ page: inout Mdoc, name: String, section: Int, date: String, source: String, summary: String) {
        page.raw(".\\\" Generated from the command-line specs (ArgumentKit); edit those, not this file.")
        page.macro("Dd", Mdoc.date(date))
        page.macro("Dt", name.uppercased(), "\(section)")
        page.macro("Os")
        page.raw(".\\\" \(source)")
        page.macro("Sh", "NAME")
        page.macro("Nm", Mdoc.quoted(name))
        var description = summary
        if description.hasSuffix(".") { description.removeLast() }
        if let first = description.first { description = first.lowercased() + description.dropFirst() }
        page.macro("Nd", Mdoc.quoted(description))
    }

    /// A tagged list: `-s , --spool DIR`, then its help, repeatable and default as in `--help`.
    static func optionList(_ page: inout Mdoc, _ options: [OptionSpec]) {
        page.macro("Bl", "-tag", "-width", "Ds")
        for option in options {
            var tag: [String] = []
            if let short = option.short { tag += ["Fl", Mdoc.quoted(String(short)), ","] }
            tag += ["Fl", Mdoc.quoted("-" + option.name)]
            if option.kind != .flag { tag += ["Ar", Mdoc.quoted(option.valueName)] }
            page.macro("It", tag)
            page.text(option.name == HelpFormatter.helpOption.name ? "Print the help text and exit." : HelpFormatter.optionHelp(option))
            if case .choices(let words) = option.completion, !option.help.contains(words.joined(separator: " or ")) {
                page.text("One of: \(words.joined(separator: ", ")).")
            }
        }
        page.macro("El")
    }

    /// A help discussion: lines indented by spaces are a literal display (tables of exit codes,
    /// the folder layout); the other lines, joined, are paragraphs.
    static func discussion(_ page: inout Mdoc, _ text: String) {
        var prose: [Substring] = []
        var display: [Substring] = []
        func flushProse() {
            guard !prose.isEmpty else { return }
            page.macro("Pp")
            page.text(prose.joined(separator: " "))
            prose = []
        }
        func flushDisplay() {
            guard !display.isEmpty else { return }
            page.macro("Bd", "-literal", "-offset", "indent")
            for line in display { page.literal(String(line)) }
            page.macro("Ed")
            display = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingSpaces.isEmpty {
                flushProse()
                flushDisplay()
            } else if line.hasPrefix(" ") {
                flushProse()
                display.append(line)
            } else {
                flushDisplay()
                prose.append(line)
            }
        }
        flushProse()
        flushDisplay()
    }

    static func seeAlsoSection(_ page: inout Mdoc, _ pages: [(name: String, section: Int)]) {
        guard !pages.isEmpty else { return }
        page.macro("Sh", "SEE ALSO")
        // mdoc's order: by section, then by name.
        let sorted = pages.sorted { ($0.section, $0.name) < ($1.section, $1.name) }
        for (index, entry) in sorted.enumerated() {
            page.macro("Xr", [Mdoc.quoted(entry.name), "\(entry.section)"] + (index + 1 < sorted.count ? [","] : []))
        }
    }

    /// `spoold: a durable...` reads `A durable...` in a page whose NAME already says spoold.
    static func strippingProgramPrefix(_ text: String, program: String) -> String {
        guard text.hasPrefix(program + ": ") else { return text }
        let rest = text.dropFirst(program.count + 2)
        return (rest.first.map { $0.uppercased() } ?? "") + rest.dropFirst()
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
