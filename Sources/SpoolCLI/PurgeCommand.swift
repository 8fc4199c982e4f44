import ArgumentKit
import SpoolCore
import SpoolStore

/// `spoold purge (ID... | --failed)`: delete items for good.
struct PurgeCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "purge",
        abstract: "Delete items for good.",
        discussion: """
        Items being uploaded (inflight/) are refused while a daemon runs; stop it first.
        Exit codes: 0 all purged, 1 some ids were not found or refused, 2 usage error.
        """,
        options: [CommonOptions.existingSpool, .flag("failed", help: "Purge every item in failed/.")],
        positionals: [PositionalSpec("ID", help: "Item ids (or unique prefixes).", repeating: true, optional: true)])

    var spoolPath: String
    var ids: [String]
    var failed: Bool

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        ids = arguments.positionals
        failed = arguments.flag("failed")
        guard failed != !ids.isEmpty else {
            throw ArgumentError(failed ? "give either ids or --failed, not both" : "give the ids to purge, or --failed", command: "purge")
        }
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try CommonOptions.openExisting(spoolPath)
        let inventory = try SpoolInventory.load(spool)
        let daemon = SpoolLock.holder(of: spool)
        var chosen: [SpoolInventory.Item] = []
        var problems = 0
        if failed {
            chosen = inventory.items.filter { $0.location.state == .failed }
        } else {
            for text in ids {
                do {
                    let item = try inventory.find(text)
                    if item.location.state == .inflight, let pid = daemon {
                        context.complain("\(item.id) is being uploaded by spoold (pid \(pid)); stop it first")
                        problems += 1
                        continue
                    }
                    chosen.append(item)
                } catch {
                    context.complain("\(error)")
                    problems += 1
                }
            }
        }
        let transitions = chosen.map { SpoolTransition(IndexRecord(.purge, $0.id, from: $0.location, to: nil)) }
        let results = try spool.commit(transitions)
        for (transition, result) in zip(transitions, results) {
            if result == .moved { context.print("\(transition.record.id)") }
            else { context.complain("\(transition.record.id) vanished before it could be purged"); problems += 1 }
        }
        return problems == 0 ? .success : .partial
    }
}
