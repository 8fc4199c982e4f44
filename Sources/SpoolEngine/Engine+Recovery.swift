import SpoolCore
import SpoolStore
import SpoolSystem

extension Engine {
    /// Start-up recovery (RELIABILITY rule 7), then load the queue from what it left in pending/.
    func recover() throws {
        let outcome = try SpoolRecovery.run(spool: spool, policy: configuration.policy, now: clock.now(), log: log)
        // The earliest in line go into memory; the rest wait in pending/ for a pass to sort them.
        var queued = outcome.queued.map { backlogEntry($0.key, $0.value) }
        if queued.count > configuration.queueMemory {
            queued.sort()
            backlog.waitUncounted(queued.count - configuration.queueMemory, earliest: queued[configuration.queueMemory])
            queued.removeLast(queued.count - configuration.queueMemory)
        }
        for entry in queued {
            let lifecycle = outcome.queued[entry.id]!
            items[entry.id] = lifecycle
            due.push(.init(notBefore: lifecycle.notBefore, id: entry.id))
        }
        summary.repaired = outcome.repaired
        summary.failed += outcome.failed
        for event in outcome.parked { observers.itemFinished(event) }
        for abort in outcome.owedAborts { aborts.add(abort, now: clock.now()) }
    }
}
