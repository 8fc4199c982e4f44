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
        let inventory = try SpoolInventory.load(
            spool, states: failed ? [.failed] : ItemState.allCases, wanted: failed ? nil : SpoolInventory.matchingAny(of: ids))
        let daemon = SpoolLock.holder(of: spool)
        var selection = ItemSelection(ids: ids, allFailed: failed, in: inventory, context: context) { item in
            guard item.location.state == .inflight, let pid = daemon else { return nil }
            return "\(item.id) is being uploaded by spoold (pid \(pid)); stop it first"
        }
        let now = context.clock.now()
        let transitions = selection.items.map {
            SpoolTransition(ItemLifecycle(location: $0.location, notBefore: now).purge().record(for: $0.id))
        }
        return try selection.commit(transitions, on: spool, verb: "purged", context: context)
    }
}
