import ArgumentKit
import SpoolCore
import SpoolStore

/// `spoold retry (ID... | --all)`: failed → pending, attempt count back to .a0.
struct RetryCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "retry",
        abstract: "Move failed items back to pending with their attempt count reset to .a0.",
        discussion: """
        The attempt history is kept in the item's json (with the time of the retry), so 'spoold show'
        still explains what happened. A running daemon picks the items up at once.
        Exit codes: 0 all retried, 1 some ids were not found or not in failed/, 2 usage error.
        """,
        options: [CommonOptions.existingSpool, .flag("all", help: "Retry every item in failed/.")],
        positionals: [PositionalSpec("ID", help: "Item ids (or unique prefixes).", repeating: true, optional: true)])

    var spoolPath: String
    var ids: [String]
    var all: Bool

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        ids = arguments.positionals
        all = arguments.flag("all")
        guard all != !ids.isEmpty else {
            throw ArgumentError(all ? "give either ids or --all, not both" : "give the ids to retry, or --all", command: "retry")
        }
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try CommonOptions.openExisting(spoolPath)
        if all {
            return try ItemSelection.forEachFailedBatch(in: spool) { selection in
                try retry(&selection, spool: spool, context: context)
            }
        }
        let inventory = try SpoolInventory.load(
            spool, states: [.failed, .pending, .inflight, .done], wanted: SpoolInventory.matchingAny(of: ids))
        var selection = ItemSelection(ids: ids, in: inventory, context: context) { item in
            item.location.state == .failed ? nil : "\(item.id) is in \(item.location.state.rawValue)/, not failed/; left as it is"
        }
        return try retry(&selection, spool: spool, context: context)
    }

    /// Moves the selected items back to pending/ in one commit.
    private func retry(_ selection: inout ItemSelection, spool: Spool, context: CommandContext) throws -> ExitCode {
        let now = context.clock.now()
        var transitions: [SpoolTransition] = []
        for item in selection.items {
            guard item.blobSize != nil else {
                context.complain("\(item.id) has no payload (.blob) left; it cannot be retried (purge it instead)")
                selection.problems += 1
                continue
            }
            var metadata = try? spool.readMetadata(item.id, at: item.location)
            if var m = metadata {
                m.retriedAt = (m.retriedAt ?? []) + [now.iso8601]
                m.clearFailure()
                metadata = m
            }
            var lifecycle = ItemLifecycle(location: item.location, notBefore: now)
            let retry = lifecycle.retry(now: now)
            transitions.append(SpoolTransition(retry.record(for: item.id), metadata: metadata, notBefore: now))
        }
        return try selection.commit(transitions, on: spool, verb: "retried", context: context)
    }
}
