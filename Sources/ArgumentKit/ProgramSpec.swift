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
}
