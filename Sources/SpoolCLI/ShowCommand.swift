import ArgumentKit
import SpoolCore
import SpoolStore
import SpoolSystem

/// `spoold show ID`: an item's metadata and attempt history.
struct ShowCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "show",
        abstract: "An item's metadata and attempt history.",
        discussion: """
        Exit codes: 0 shown, 1 no item has that id, or the prefix matches several items,
        2 usage error, 3 the spool could not be read.
        """,
        options: [CommonOptions.existingSpool, CommonOptions.json.withHelp("Print the item's .json file as it is.")],
        positionals: [PositionalSpec("ID", help: "The item's id, or a unique prefix of it.")])

    var spoolPath: String
    var id: String
    var json: Bool

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        id = arguments.positionals[0]
        json = arguments.flag("json")
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try CommonOptions.openExisting(spoolPath)
        let item: SpoolInventory.Item
        do {
            item = try SpoolInventory.load(spool, wanted: SpoolInventory.matchingAny(of: [id])).find(id)
        } catch let error as SpoolError {
            // Not found is the operator's typo, as for retry and purge: 1, not "spool unusable".
            switch error {
            case .noSuchItem, .ambiguousItem:
                context.complain("\(error)")
                return .partial
            default: throw error
            }
        }
        let folder = SpoolFolder(item.location.state)
        let jsonName = ItemFileName(id: item.id, attempt: item.location.attempt, kind: .json)
        if json {
            let bytes = try spool.readSmallFile(jsonName.description, in: folder, limit: ItemMetadata.maximumEncodedSize)
            context.print(String(decoding: bytes, as: UTF8.self).trimmingTrailingNewline)
            return .success
        }
        context.print("id        \(item.id)")
        context.print("state     \(item.location.state.rawValue) (\(folder.rawValue)/\(item.id).a\(item.location.attempt).*)")
        let read = item.hasJSON ? Result { try spool.readMetadata(item.id, at: item.location) } : nil
        context.print("attempts  \(item.location.attempt)\((try? read?.get()).map { Self.split(item.location, $0) } ?? "")")
        if item.location.state == .pending, let due = item.jsonModified {
            context.print("next try  \(due.iso8601)")
        }
        guard let read else {
            let blob = ItemFileName(id: item.id, attempt: item.location.attempt, kind: .blob)
            if let name = spool.directSourceName(of: blob, at: item.location).map(FileName.decode) {
                context.print("metadata  none yet: sent directly from incoming/\(FileName.display(name)) (blob \(item.blobSize.map(Output.bytes) ?? "missing"))")
                printParts(of: item.id, in: spool, context: context)
                return .success
            }
            context.print("metadata  missing (blob \(item.blobSize.map(Output.bytes) ?? "missing"))")
            return .success
        }
        let metadata: ItemMetadata
        do { metadata = try read.get() } catch {
            context.print("metadata  unreadable: \(error)")
            return .success
        }
        context.print("name      \(metadata.originalName)")
        context.print("size      \(metadata.size) B\(item.blobSize == nil ? " (blob missing)" : "")")
        context.print("type      \(metadata.contentType)")
        context.print("created   \(metadata.createdAt)")
        for (name, value) in metadata.headers.sorted(by: { $0.key < $1.key }) { context.print("header    \(name): \(value)") }
        for (name, value) in metadata.fields.sorted(by: { $0.key < $1.key }) { context.print("field     \(name)=\(value)") }
        if let reason = metadata.failureReason { context.print("failed    \(reason)") }
        printParts(of: item.id, in: spool, context: context)
        for retried in metadata.retriedAt ?? [] { context.print("retried   \(retried)") }
        for a in metadata.attempts {
            var line = "attempt \(a.number)  \(a.startedAt)  \(a.outcome)"
            if let status = a.httpStatus { line += "  HTTP \(status)" }
            if let error = a.error { line += "  \(error)" }
            context.print(line)
            if let excerpt = a.responseExcerpt { context.print("          response: \(oneLine(excerpt, max: 200))") }
        }
        return .success
    }

    /// The progress of the item's multipart upload, when it has a part log.
    private func printParts(of id: ItemID, in spool: Spool, context: CommandContext) {
        if let (tus, offset) = spool.partLogs.tusState(of: id) {
            context.print("tus       \(Output.bytes(offset)) of \(Output.bytes(tus.size)) acknowledged when last noted (upload \(tus.uploadURL))")
            return
        }
        guard let upload = spool.partLogs.state(of: id) else { return }
        context.print("parts     \(upload.parts.count)/\(upload.plan.partCount) done, \(Output.bytes(upload.partSize)) each (S3 multipart upload \(upload.uploadID))")
    }

    /// ` (2 answered, 3 interrupted)` when a crash interrupted some of the attempts counted in N
    /// (docs/guarantees.md "Two attempt budgets"); empty otherwise.
    private static func split(_ location: ItemLocation, _ metadata: ItemMetadata) -> String {
        let inProgress = location.state == .inflight ? 1 : 0
        let tally = AttemptTally(ended: location.attempt - inProgress, history: metadata.attempts)
        guard tally.interrupted > 0 else { return "" }
        return " (\(tally.answered) answered, \(tally.interrupted) interrupted\(inProgress == 1 ? ", 1 in progress" : ""))"
    }
}

extension String {
    var trimmingTrailingNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
