import ArgumentKit
import SpoolClient
import SpoolCore

/// `spoold enqueue FILE...`: atomically add files as items and print their ids.
struct EnqueueCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "enqueue",
        abstract: "Atomically add files as items; prints one id per line.",
        discussion: """
        Each file is copied into the spool (or renamed with --move when it is on the spool's file
        system) and made durable before its id is printed. All files of one call share one commit,
        so enqueueing many files at once is fast. A file that cannot be added (missing, not a
        regular file) is reported on stderr and the others are still added. A daemon starting
        meanwhile waits for the call to finish (and the call for its start-up recovery).
        With --max-spool-size, files are added only while the payload bytes queued (pending and
        in flight, counted from the spool) are below BYTES, as the daemon's own limit does; the
        rest are refused and the exit code is 75. Give it the daemon's value: enqueue cannot
        know it.
        Exit codes: 0 all added, 1 some files were skipped, 2 usage error, 3 the spool could not
        be written: its file system is full (the message says so), or an I/O error (the files not
        printed were not added), 75 the spool is full (the files not printed were not added; try
        again later).
        """,
        options: [
            CommonOptions.spool,
            .flag("move", help: "Rename the files into the spool instead of copying (copy + delete across file systems)."),
            CommonOptions.header.withHelp("A header sent with these items."),
            OptionSpec("field", kind: .repeatedValue, valueName: "KEY=VALUE", help: "A form field for multipart uploads."),
            OptionSpec("content-type", valueName: "TYPE", help: "Content type of these items.",
                       defaultDescription: "guessed from the file name"),
            CommonOptions.maximumSpoolSizeOption.withHelp(
                "Refuse files (exit 75) once this many payload bytes are queued, e.g. 500M or 2G (K, M, G, T: powers of 1024, also written KiB, MiB...)."),
        ],
        positionals: [PositionalSpec("FILE", help: "Files to add.", repeating: true)])

    var spoolPath: String
    var files: [String]
    var options: EnqueueOptions

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        files = arguments.positionals
        var fields: [String: String] = [:]
        for text in arguments.values("field") {
            guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
                throw ArgumentError("invalid --field '\(text)': expected KEY=VALUE", command: "enqueue")
            }
            fields[String(text[..<eq])] = String(text[text.index(after: eq)...])
        }
        options = EnqueueOptions(
            headers: try CommonOptions.headers(arguments, command: "enqueue"), fields: fields,
            contentType: arguments.value("content-type"), move: arguments.flag("move"),
            maximumSpoolBytes: try CommonOptions.maximumSpoolSize(arguments))
        if let type = options.contentType {
            if let problem = type.isEmpty ? "it is empty" : HeaderRule.valueProblem(type) {
                throw ArgumentError("invalid --content-type: \(problem)", command: "enqueue")
            }
        }
    }

    /// The library's enqueue (`SpoolClient`), one code path for both: this prints its outcomes.
    func run(context: CommandContext) throws -> ExitCode {
        let clock = context.clock
        let outcomes = try SpoolClient(spool: spoolPath, clock: { clock.now() }).enqueue(files, options: options)
        for outcome in outcomes {
            switch outcome.result {
            case .added(let id): context.print(id)
            case .skipped(let reason): context.complain("skipped \(reason)")
            case .refused: break
            }
        }
        for outcome in outcomes where outcome.result == .refused {
            context.complain(
                "refused \(outcome.file): the spool is full (--max-spool-size \(ByteUnits.exactText(options.maximumSpoolBytes ?? 0)))")
        }
        return ExitCode(rawValue: EnqueueOutcome.exitCode(of: outcomes)) ?? .failure
    }
}
