import SpoolCore
import SpoolStore

/// The items an operator command (`retry`, `purge`) acts on: every item in failed/ (a batch at a
/// time, `forEachFailedBatch`), or the ids given, each checked by the command's own rule.
/// Problems are reported as they are found.
struct ItemSelection {
    var items: [SpoolInventory.Item] = []
    var problems = 0

    /// A batch of items taken as they are.
    init(items: [SpoolInventory.Item]) { self.items = items }

    /// Every item in failed/, a thousand at a time as the folder is read, so `retry --all` and
    /// `purge --failed` hold a batch, not the folder, however many items failed. `act` commits
    /// each batch (moving its items out of failed/ while the folder is read is fine: a name gone
    /// is not read again) and returns its exit code; the worst one is returned.
    static func forEachFailedBatch(in spool: Spool, _ act: (inout ItemSelection) throws -> ExitCode) throws -> ExitCode {
        var code = ExitCode.success
        try SpoolInventory.forEachBatch(spool, states: [.failed]) { batch in
            var selection = ItemSelection(items: batch)
            if try act(&selection) != .success { code = .partial }
        }
        return code
    }

    /// - Parameter refusal: why an item found by id may not be acted on, or nil when it may.
    init(
        ids: [String], in inventory: SpoolInventory, context: CommandContext, refusal: (SpoolInventory.Item) -> String?
    ) {
        for text in ids {
            do {
                let item = try inventory.find(text)
                if let reason = refusal(item) {
                    context.complain(reason)
                    problems += 1
                } else {
                    items.append(item)
                }
            } catch {
                context.complain("\(error)")
                problems += 1
            }
        }
    }

    /// Commits the transitions, prints each id that moved, and reports the ones that vanished.
    mutating func commit(_ transitions: [SpoolTransition], on spool: Spool, verb: String, context: CommandContext) throws
        -> ExitCode
    {
        let results = try spool.commit(transitions)
        for (transition, result) in zip(transitions, results) {
            if result == .moved {
                context.print(transition.record.id.rawValue)
            } else {
                context.complain("\(transition.record.id) vanished before it could be \(verb)")
                problems += 1
            }
        }
        return problems == 0 ? .success : .partial
    }
}
