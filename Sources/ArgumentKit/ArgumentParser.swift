/// Parses one command's arguments against its `CommandSpec`, and renders its help.
///
/// Rules, in the spirit of getopt_long:
/// - `--name value`, `--name=value` and `-x value`. Short options are written alone: no
///   bundling (`-vq`) and no attached values (`-sDIR`).
/// - A value option takes the next argument as its value whatever it looks like, so
///   `--header -X` gives `-X`, and `--spool --help` gives the spool `--help`. This matches
///   getopt, keeps values like negative numbers usable, and means one rule to remember.
/// - Flags take no value: `--verbose=yes` is an error.
/// - `--` ends options; everything after it is positional. A lone `-` is positional.
/// - A `.value` option given twice keeps the last value.
/// - `-h` / `--help` before `--` requests help and silences every other error, so
///   `spoold enqueue --help` works on any line.
public enum ArgumentParser {
    /// Parses `arguments` (without the program and command name) for `spec`.
    public static func parse(_ arguments: [String], for spec: CommandSpec) throws(ArgumentError) -> ParsedArguments {
        assert(spec.problems.isEmpty, "ArgumentKit: unsound spec '\(spec.name)': \(spec.problems)")
        var parsed = ParsedArguments(spec: spec)
        // Keep going after the first problem: a later `--help` still wins over it.
        var firstProblem: String? = nil
        func note(_ problem: String) { if firstProblem == nil { firstProblem = problem } }

        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                parsed.helpRequested = true
                continue
            }

            let written: String
            let attachedValue: String?
            let option: OptionSpec?
            if argument.hasPrefix("--") {
                if let equals = argument.firstIndex(of: "=") {
                    written = String(argument[..<equals])
                    attachedValue = String(argument[argument.index(after: equals)...])
                } else {
                    written = argument
                    attachedValue = nil
                }
                if written == "--help" {
                    note("option '--help' takes no value")
                    continue
                }
                option = spec.option(named: written.dropFirst(2))
            } else {
                written = argument
                attachedValue = nil
                option = argument.count == 2 ? spec.option(short: argument.last!) : nil
            }

            guard let option else {
                note(unknownOptionMessage(written, in: spec))
                continue
            }
            switch option.kind {
            case .flag:
                if attachedValue != nil {
                    note("option '\(written)' is a flag and takes no value (got '\(argument)')")
                    continue
                }
                parsed.flagsGiven.insert(option.name)
            case .value, .repeatedValue:
                let value: String
                if let attachedValue {
                    value = attachedValue
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    note("option '\(written)' needs a value \(option.valueName)")
                    continue
                }
                parsed.valuesByName[option.name, default: []].append(value)
            }
        }

        if parsed.helpRequested { return parsed }
        if let firstProblem { throw ArgumentError(firstProblem, command: spec.name) }
        if let problem = positionalCountProblem(parsed.positionals, spec: spec) {
            throw ArgumentError(problem, command: spec.name)
        }
        return parsed
    }

    /// The full `--help` text for one command, e.g. `help(for: enqueue, program: "spoold")`.
    /// Lines are at most 100 columns where words allow; no trailing newline.
    public static func help(for spec: CommandSpec, program: String) -> String {
        HelpFormatter.commandHelp(spec, program: program)
    }

    /// The top-level help: usage, abstract, the commands with their abstracts, then `footer`.
    public static func overview(program: String, abstract: String, commands: [CommandSpec], footer: String?) -> String {
        HelpFormatter.overview(ProgramSpec(name: program, summary: "", abstract: abstract, commands: commands, footer: footer))
    }

    /// The top-level help of `program`: usage, abstract, commands, the program's own options
    /// (with `--help`), then its footer.
    public static func overview(of program: ProgramSpec) -> String { HelpFormatter.overview(program) }

    private static func unknownOptionMessage(_ written: String, in spec: CommandSpec) -> String {
        let message = "unknown option '\(written)'"
        let isSingleDash = !written.hasPrefix("--")
        let typedName = String(written.drop { $0 == "-" })
        // A lone short letter is too little to guess from; `-spool` is likely `--spool`.
        if !(isSingleDash && typedName.count <= 1),
           let suggestion = NameSuggestion.closest(to: typedName, among: spec.options.map(\.name) + ["help"])
        {
            return message + " (did you mean '--\(suggestion)'?)"
        }
        if isSingleDash, typedName.count > 1, let first = typedName.first, spec.option(short: first) != nil {
            return message + " (write short options one at a time, with any value as the next argument: '-\(first) ...')"
        }
        if isSingleDash, let first = spec.positionals.first {
            return message + " (to pass it as \(first.name), put it after '--')"
        }
        return message
    }

    private static func positionalCountProblem(_ given: [String], spec: CommandSpec) -> String? {
        let required = spec.positionals.filter { !$0.optional }
        if given.count < required.count {
            let missing = required[given.count...].map(\.name)
            return missing.count == 1
                ? "missing argument \(missing[0])" : "missing arguments \(missing.joined(separator: " "))"
        }
        let repeats = spec.positionals.last?.repeating ?? false
        guard !repeats, given.count > spec.positionals.count else { return nil }
        let extra = given[spec.positionals.count]
        if spec.positionals.isEmpty { return "unexpected argument '\(extra)' (this command takes no arguments)" }
        return "unexpected argument '\(extra)' (expected only \(spec.positionals.map(\.usageForm).joined(separator: " ")))"
    }
}
