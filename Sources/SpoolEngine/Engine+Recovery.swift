import SpoolCore
import SpoolStore
import SpoolSystem

extension Engine {
    /// Start-up recovery (docs/guarantees.md "Crash safety": idempotent, every item kept or set aside) of what
    /// a stop may have left under way, then the queue: the items recovery returned to pending/ go
    /// into memory, and the first pass over pending/ reads the rest (nothing is claimed before it,
    /// so the oldest still goes first).
    func recover() throws {
        let outcome = try SpoolRecovery.run(spool: spool, policy: configuration.policy, now: clock.now(), log: log, scope: .inFlight)
        backlog.unknownOnDisk()
        for (id, lifecycle) in outcome.queued.sorted(by: { backlogEntry($0.key, $0.value) < backlogEntry($1.key, $1.value) })
            .prefix(configuration.queueMemory)
        {
            items[id] = lifecycle
            due.push(.init(notBefore: lifecycle.notBefore, id: id))
        }
        summary.repaired = outcome.repaired
        summary.failed += outcome.failed
        for event in outcome.parked { observers.itemFinished(event) }
        for abort in outcome.owedAborts { aborts.add(abort, now: clock.now()) }
    }
}
