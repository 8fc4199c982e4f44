import SpoolCore
import SpoolStore
import SpoolSystem

extension Engine {
    /// Start-up recovery (RELIABILITY rule 7), then load the queue from what it left in pending/.
    func recover() throws {
        let outcome = try SpoolRecovery.run(spool: spool, policy: configuration.policy, now: clock.now(), log: log)
        for (id, lifecycle) in outcome.queued {
            items[id] = lifecycle
            due.push(.init(notBefore: lifecycle.notBefore, id: id))
        }
        summary.repaired = outcome.repaired
        summary.failed += outcome.failed
        for event in outcome.parked { observers.itemFinished(event) }
        for abort in outcome.owedAborts { aborts.add(abort, now: clock.now()) }
    }
}
