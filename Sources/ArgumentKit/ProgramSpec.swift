/// A program with subcommands, declared once: its top-level help, its manual pages and its shell
/// completions are all made from this and its commands' `CommandSpec`s.
public struct ProgramSpec: Sendable {
    /// The program as typed, e.g. `spoold`.
    public var name: String
    /// A few words for a manual page's NAME line, e.g. `a durable spool-directory uploader`.
    public var summary: String
    /// The paragraph under the top-level usage line.
    public var abstract: String
    /// Every command, in help order.
    public var commands: [CommandSpec]
    /// Options of the program itself (`--version`), given instead of a command. `--help` is implied.
    public var options: [OptionSpec]
    /// The command run when the first argument is an option, e.g. `run`.
    public var defaultCommand: String?
    /// Printed after the command list (the spool's layout, exit codes). Line breaks are kept.
    public var footer: String?

    public init(
        name: String, summary: String, abstract: String, commands: [CommandSpec], options: [OptionSpec] = [],
        defaultCommand: String? = nil, footer: String? = nil
    ) {
        self.name = name
        self.summary = summary
        self.abstract = abstract
        self.commands = commands
        self.options = options
        self.defaultCommand = defaultCommand
        self.footer = footer
    }

    public func command(named name: String) -> CommandSpec? { commands.first { $0.name == name } }

    /// Mistakes in the declarations: each command's own (`CommandSpec.problems`), and an option
    /// that two commands declare differently. An option of one name is one option to the user,
    /// so every command that has it takes it from one declaration: the same value, default,
    /// completion and help (a command may say what the option does for it: `OptionSpec.withHelp`).
    /// Empty when the program is sound; a test over the real program keeps it so.
    public var problems: [String] {
        var problems = commands.flatMap { command in command.problems.map { "\(command.name): \($0)" } }
        var first: [String: (owner: String, option: OptionSpec)] = [:]
        let declared = options.map { (owner: name, option: $0) }
            + commands.flatMap { command in command.options.map { (owner: command.name, option: $0) } }
        for (owner, option) in declared {
            guard let (firstOwner, firstOption) = first[option.name] else {
                first[option.name] = (owner, option)
                continue
            }
            for difference in option.differences(from: firstOption) {
                problems.append("'--\(option.name)' of \(owner) is not \(firstOwner)'s: \(difference)")
            }
        }
        return problems
    }
}
