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
        Exit codes: 0 all added, 1 some files were skipped, 2 usage error, 3 the spool could not
        be written: its file system is full (the message says so), or an I/O error (the files not
        printed were not added).
        """,
        options: [
            CommonOptions.spool,
            .flag("move", help: "Rename the files into the spool instead of copying (copy + delete across file systems)."),
            OptionSpec("header", kind: .repeatedValue, valueName: "'NAME: VALUE'", help: "A header sent with these items."),
            OptionSpec("field", kind: .repeatedValue, valueName: "KEY=VALUE", help: "A form field for multipart uploads."),
            OptionSpec("content-type", valueName: "TYPE", help: "Content type of these items.",
                       defaultDescription: "guessed from the file name"),
        ],
        positionals: [PositionalSpec("FILE", help: "Files to add.", repeating: true)])

    var spoolPath: String
    var files: [String]
    var move: Bool
    var headers: [String: String]
    var fields: [String: String]
    var contentType: String?

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
        contentType = arguments.value("content-type")
        if let type = contentType, type.isEmpty || type.contains("\n") || type.contains("\r") {
            throw ArgumentError("invalid --content-type", command: "enqueue")
        }
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try Spool(path: spoolPath)
        // A daemon starting meanwhile must not take our staged files for orphans.
        spool.sharesStagingWithRecovery = true
        var generator = ItemIDGenerator(processTag: UInt64.random(in: 0...UInt64.max))
        let now = context.clock.now()
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
        return skipped == 0 ? .success : .partial
    }
}
