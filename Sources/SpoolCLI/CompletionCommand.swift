import ArgumentKit

/// `spoold completion bash|zsh|fish`: prints a completion script for the shell, made from the
/// same specs as `--help` (commands, options, the values an option takes).
struct CompletionCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "completion",
        abstract: "Print a shell completion script for bash, zsh or fish.",
        discussion: """
        The script completes commands, options and the values some options take (--transport
        curl|urlsession, --spool DIR, ls STATE...), from the same declarations as --help, so it
        is always in step with this binary. Install it where the shell looks:
          spoold completion bash > /usr/share/bash-completion/completions/spoold
          spoold completion zsh > /usr/share/zsh/vendor-completions/_spoold
          spoold completion fish > /usr/share/fish/vendor_completions.d/spoold.fish
        or, for one shell session of bash: source <(spoold completion bash)
        """,
        positionals: [PositionalSpec(
            "SHELL", help: "bash, zsh or fish.", completion: .choices(CompletionFormatter.Shell.allCases.map(\.rawValue)))])

    var shell: CompletionFormatter.Shell

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        let name = arguments.positionals[0]
        guard let shell = CompletionFormatter.Shell(rawValue: name) else {
            throw ArgumentError("unknown shell '\(name)' (expected bash, zsh or fish)", command: "completion")
        }
        self.shell = shell
    }

    func run(context: CommandContext) throws -> ExitCode {
        var script = CompletionFormatter.script(for: CLI.program, shell: shell)
        if script.hasSuffix("\n") { script.removeLast() }
        context.print(script)
        return .success
    }
}
