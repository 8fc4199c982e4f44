import ArgumentKit

/// One `spoold` subcommand: its declaration (which also produces `--help`), validation of the
/// parsed arguments into a value, and running it.
protocol SpooldCommand {
    static var spec: CommandSpec { get }
    /// Validates arguments; throws `ArgumentError` for anything the user must fix.
    init(_ arguments: ParsedArguments, context: CommandContext) throws
    /// Does the work; errors are mapped to exit codes in one place (`CLI`).
    func run(context: CommandContext) throws -> ExitCode
}
