import ArgumentKit
import SpoolClient
import SpoolCore
import SpoolStore
import SpoolSystem

/// Entry point: picks the subcommand, parses, validates, runs, and maps every error to an exit
/// code and a message in this one place.
public enum CLI {
    public static let version = SpooldVersion.current

    static let abstract = "spoold: a durable spool-directory uploader. Files dropped into SPOOL/incoming/ (or added with 'spoold enqueue') are uploaded over HTTP or HTTPS, or to an S3-compatible store (--url s3://BUCKET/PREFIX), deleted once accepted, retried, and parked in SPOOL/failed/ with their error history."

    /// Every command, in help order.
    static let commands: [CommandSpec] = [
        DaemonCommand.spec(drain: false), DaemonCommand.spec(drain: true), EnqueueCommand.spec, StatusCommand.spec,
        ListCommand.spec, ShowCommand.spec, RetryCommand.spec, PurgeCommand.spec, CheckCommand.spec, CompletionCommand.spec,
    ]

    static let footer = """
    The state of an item is the folder it sits in; its attempt count is in its file name:
      SPOOL/incoming/  drop files here, or in folders below it (write under a .dot-name, then rename)
      SPOOL/pending/   <id>.a<N>.json + .blob, waiting (N = attempts made)
      SPOOL/inflight/  being uploaded
      SPOOL/failed/    gave up; the .json holds every attempt's error
    Exit codes: 0 ok, 1 partly done (drain: items failed; enqueue: a file skipped; show/retry/purge:
    an id not found), 2 usage error, 3 spool or disk error, 4 another spoold works on this spool,
    5 drain stopped (signal or --max-time) before everything was uploaded, 75 enqueue
    --max-spool-size: the spool is full (try again later).
    Run 'spoold COMMAND --help' for a command's options.
    """

    static let versionOption = OptionSpec.flag("version", help: "Print the version ('spoold VERSION') and exit.")

    /// The whole command line: the top-level help, the manual pages and the shell completions.
    public static let program = ProgramSpec(
        name: "spoold", summary: "a durable spool-directory uploader", abstract: abstract, commands: commands,
        options: [versionOption], defaultCommand: "run", footer: footer)

    public static func main(_ arguments: [String], context: CommandContext) -> Int32 {
        var args = arguments
        if args.first == "--version" {
            context.print("spoold \(version)")
            return ExitCode.success.rawValue
        }
        if args.first == "help" {
            args.removeFirst()
            if let name = args.first, let spec = commands.first(where: { $0.name == name }) {
                context.print(ArgumentParser.help(for: spec, program: "spoold"))
            } else {
                context.print(ArgumentParser.overview(of: program))
            }
            return ExitCode.success.rawValue
        }
        if args.isEmpty || args == ["-h"] || args == ["--help"] {
            context.print(ArgumentParser.overview(of: program))
            return args.isEmpty ? ExitCode.usage.rawValue : ExitCode.success.rawValue
        }
        // `spoold --spool DIR --url URL` means `spoold run ...`.
        let name = args[0].hasPrefix("-") ? "run" : args.removeFirst()
        guard let spec = commands.first(where: { $0.name == name }) else {
            context.complain("unknown command '\(name)' (commands: \(commands.map(\.name).joined(separator: ", ")); see 'spoold --help')")
            return ExitCode.usage.rawValue
        }
        do {
            let parsed = try ArgumentParser.parse(args, for: spec)
            if parsed.helpRequested {
                context.print(ArgumentParser.help(for: spec, program: "spoold"))
                return ExitCode.success.rawValue
            }
            return try run(name, parsed, context).rawValue
        } catch let error as ArgumentError {
            context.complain("\(error.message) (see 'spoold \(error.command.isEmpty ? name : error.command) --help')")
            return ExitCode.usage.rawValue
        } catch let error as SpoolError {
            if case .alreadyRunning = error {
                context.complain("\(error)")
                return ExitCode.locked.rawValue
            }
            context.complain("\(error)")
            return ExitCode.failure.rawValue
        } catch let error as SpoolClientError {
            context.complain(error.description)
            return error.exitCode
        } catch let error as SystemError {
            context.complain("\(error)" + (error.isOutOfSpace ? " (free some space; nothing half-written was acknowledged)" : ""))
            return ExitCode.failure.rawValue
        } catch {
            context.complain("\(error)")
            return ExitCode.failure.rawValue
        }
    }

    private static func run(_ name: String, _ parsed: ParsedArguments, _ context: CommandContext) throws -> ExitCode {
        switch name {
        case "run": try DaemonCommand(parsed, context: context, drain: false).run(context: context)
        case "drain": try DaemonCommand(parsed, context: context, drain: true).run(context: context)
        case "enqueue": try EnqueueCommand(parsed, context: context).run(context: context)
        case "status": try StatusCommand(parsed, context: context).run(context: context)
        case "ls": try ListCommand(parsed, context: context).run(context: context)
        case "show": try ShowCommand(parsed, context: context).run(context: context)
        case "retry": try RetryCommand(parsed, context: context).run(context: context)
        case "purge": try PurgeCommand(parsed, context: context).run(context: context)
        case "check": try CheckCommand(parsed, context: context).run(context: context)
        case "completion": try CompletionCommand(parsed, context: context).run(context: context)
        default: preconditionFailure("command \(name) declared but not wired")
        }
    }
}
