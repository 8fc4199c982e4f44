/// Everything one command accepts, declared once: the parser and the help text both read it.
public struct CommandSpec: Sendable {
    /// The subcommand as typed, e.g. `enqueue`. Empty for a program without subcommands.
    public var name: String
    /// One line, used at the top of the command's help and in the top-level command list.
    public var abstract: String
    /// Replaces what follows `Usage: <program> <name> ` in help. Each line becomes its own
    /// usage line, for commands with more than one form.
    public var usage: String?
    /// Paragraphs printed after the options (exit codes, examples). Line breaks are kept;
    /// lines longer than the help width are wrapped, keeping their indentation.
    public var discussion: String?
    public var options: [OptionSpec]
    public var positionals: [PositionalSpec]

    public init(
        name: String, abstract: String, usage: String? = nil, discussion: String? = nil, options: [OptionSpec] = [],
        positionals: [PositionalSpec] = []
    ) {
        self.name = name
        self.abstract = abstract
        self.usage = usage
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
    }

    /// Mistakes in the declaration itself, e.g. two options sharing a name. Empty when the spec
    /// is sound. The parser assumes a sound spec (and asserts it in debug builds); a test over
    /// every command's spec catches these before an operator ever could.
    public var problems: [String] {
        var problems: [String] = []
        var longNames: Set<String> = []
        var shortNames: Set<Character> = []
        for option in options {
            if option.name.isEmpty || option.name.hasPrefix("-") || option.name.contains("=")
                || option.name.contains(where: \.isWhitespace)
            {
                problems.append("option name '\(option.name)' must be non-empty, without leading dashes, '=' or spaces")
            }
            if option.name == "help" { problems.append("option '--help' is reserved for help") }
            if !longNames.insert(option.name).inserted { problems.append("option '--\(option.name)' is declared twice") }
            if let short = option.short {
                if short == "h" { problems.append("option '-h' is reserved for help") }
                if short == "-" || short == "=" || short.isWhitespace {
                    problems.append("short name '\(short)' of '--\(option.name)' is not usable")
                }
                if !shortNames.insert(short).inserted { problems.append("short option '-\(short)' is declared twice") }
            }
        }
        var positionalNames: Set<String> = []
        var seenOptional = false
        for (index, positional) in positionals.enumerated() {
            if !positionalNames.insert(positional.name).inserted {
                problems.append("positional \(positional.name) is declared twice")
            }
            if positional.repeating, index != positionals.count - 1 {
                problems.append("repeating positional \(positional.name) must be the last one")
            }
            if positional.optional { seenOptional = true }
            else if seenOptional {
                problems.append("required positional \(positional.name) follows an optional one")
            }
        }
        return problems
    }

    func option(named name: Substring) -> OptionSpec? { options.first { $0.name == name } }
    func option(short: Character) -> OptionSpec? { options.first { $0.short == short } }
}
