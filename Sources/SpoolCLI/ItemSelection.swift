import SpoolCore
import SpoolStore

/// The items an operator command (`retry`, `purge`) acts on: every item in failed/, or the ids
/// given, each checked by the command's own rule. Problems are reported as they are found.
struct ItemSelection {
    var items: [SpoolInventory.Item] = []
    var problems = 0

    /// - Parameter refusal: why an item found by id may not be acted on, or nil when it may.
    init(
        ids: [String], allFailed: Bool, in inventory: SpoolInventory, context: CommandContext,
        refusal: (SpoolInventory.Item) -> String?
    ) {
        if allFailed {
            items = inventory.items.filter { $0.location.state == .failed }
            return
        }
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
