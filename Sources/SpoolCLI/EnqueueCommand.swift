import ArgumentKit
import Glibc
import SpoolCore
import SpoolStore

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
            OptionSpec("header", kind: .repeatedValue, valueName: "'NAME: VALUE'", help: "A header sent with these items."),
            OptionSpec("field", kind: .repeatedValue, valueName: "KEY=VALUE", help: "A form field for multipart uploads."),
            OptionSpec("content-type", valueName: "TYPE", help: "Content type of these items.",
                       defaultDescription: "guessed from the file name"),
            OptionSpec("max-spool-size", valueName: "BYTES",
                       help: "Refuse files (exit 75) once this many payload bytes are queued, e.g. 500M or 2G (K, M, G, T: powers of 1024, also written KiB, MiB...)."),
        ],
        positionals: [PositionalSpec("FILE", help: "Files to add.", repeating: true)])

    var spoolPath: String
    var files: [String]
    var move: Bool
    var headers: [String: String]
    var fields: [String: String]
    var contentType: String?
    var maximumSpoolBytes: Int64?

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        files = arguments.positionals
        move = arguments.flag("move")
        headers = try CommonOptions.headers(arguments, command: "enqueue")
        fields = [:]
        for text in arguments.values("field") {
            guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
                throw ArgumentError("invalid --field '\(text)': expected KEY=VALUE", command: "enqueue")
            }
            fields[String(text[..<eq])] = String(text[text.index(after: eq)...])
        }
        maximumSpoolBytes = try CommonOptions.maximumSpoolSize(arguments)
        contentType = arguments.value("content-type")
        if let type = contentType {
            if let problem = type.isEmpty ? "it is empty" : HeaderRule.valueProblem(type) {
                throw ArgumentError("invalid --content-type: \(problem)", command: "enqueue")
            }
        }
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try Spool(path: spoolPath)
        // A daemon starting meanwhile must not take our staged files for orphans.
        spool.sharesStagingWithRecovery = true
        var generator = ItemIDGenerator(processTag: UInt64.random(in: 0...UInt64.max))
        let now = context.clock.now()
        var files = self.files
        var refused: [String] = []
        if let maximumSpoolBytes {
            let limit = SpoolSizeLimit(bytes: maximumSpoolBytes)
            let summary = try SpoolSummary.load(spool)
            var queued = (summary.states[.pending]?.bytes ?? 0) + (summary.states[.inflight]?.bytes ?? 0)
            var admitted: [String] = []
            for file in files {
                guard limit.admits(queued: queued) else { refused.append(file); continue }
                var st = stat()
                if stat(file, &st) == 0 { queued += Int64(st.st_size) }
                admitted.append(file)
            }
            files = admitted
        }
        let items = files.map { file in
            let name = file.split(separator: "/").last.map(String.init) ?? file
            let id = generator.next(at: now, originalName: name)
            var metadata = ItemMetadata(
                id: id, originalName: name, size: 0, contentType: contentType ?? ContentType.guess(forFileName: name),
                createdAt: now, headers: headers, fields: fields)
            metadata.attempts = []
            return NewItem(source: .external(path: file, move: move), metadata: metadata)
        }
        let results = try spool.add(items)
        var skipped = 0
        for result in results {
            switch result {
            case .added(let id): context.print(id.rawValue)
            case .rejected(let reason):
                skipped += 1
                context.complain("skipped \(reason)")
            }
        }
        for file in refused { context.complain("refused \(file): the spool is full (--max-spool-size \(maximumSpoolBytes ?? 0) B)") }
        if !refused.isEmpty { return .spoolFull }
        return skipped == 0 ? .success : .partial
    }
}
