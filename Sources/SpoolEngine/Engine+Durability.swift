import SpoolCore
import SpoolStore

/// The loop never waits on the disk: each round's commit (`Spool.beginCommit`) goes on in steps
/// whose syncs the `DurabilityWorker` makes on a thread of its own, while the loop reads answers,
/// keeps deadlines and starts uploads. A round's claims move and their uploads start at once
/// (their records are written, and synced by the worker); its finished items move once their
/// records are durable, and are told (log, observers, hooks) once the folders they moved in are.
///
/// Until then a finished item is *being recorded* (`recording`): not claimable, not given back
/// to disk, not dropped to make room, in memory once; a requeued one joins the due queue only
/// when its commit is done. The part logs' records hand their syncs to the same worker
/// (`Engine+Records`). The end owed for the upload of a multipart item the round parks in
/// failed/ (`oweAborts`) is synced first among the round's own: durable before the item moves
/// and before its part log goes. Syncs are made in the order they were handed over; a failed one
/// stops the daemon at the next step, with nothing more acknowledged; compaction, a stop, a
/// drain and `--exit-when-idle` wait for the commits in flight.
extension Engine {
    /// A round's commit on its way to disk.
    struct CommitInFlight {
        var commit: Spool.Commit
        /// The sync the commit's next step waits for.
        var ticket: Int
        /// What to tell once its finished items are durable (its claims started already).
        var round: Round
    }

    /// Begins the round's commit: moves its claims (their uploads start) and hands the first
    /// syncs to the worker.
    func commitRound(_ round: Round, now: Timestamp) throws {
        if !round.directSuccesses.isEmpty {
            spool.removeDirectBlobs(round.directSuccesses)
            intake.spaceFreed()
        }
        // Direct successes alone (nothing recorded) commit nothing: told at once.
        guard !round.isEmpty else { return recorded(round, results: [], now: now) }
        let (owedAborts, owing) = try oweAborts(of: round, now: now)
        let (commit, claimed, work): (Spool.Commit, [TransitionResult], SyncWork)
        do {
            (commit, claimed, work) = try spool.beginCommit(round.transitions, claims: round.claims.count, removingInBackground: true)
        } catch {
            for syncs in owing { syncs.discard() }
            throw error
        }
        recording.formUnion(round.finishedIDs)
        for (claim, result) in zip(round.claims, claimed) {
            let id = claim.transition.record.id
            guard result == .moved else {
                log.warning("\(id) vanished before its upload (\(result)); an operator moved or purged it")
                items[id] = nil
                observers.itemLeftQueue(id)
                continue
            }
            start(claim, now: now)
        }
        var told = round
        told.claims = []
        told.owedAborts = owedAborts
        // The aborts owed first: durable before their items move to failed/ (the commit's next step).
        let first = SyncWork.merging(owing + [work]) ?? work
        commits.append(CommitInFlight(commit: commit, ticket: durability.handOver(first), round: told))
        try advanceCommits(now: now)
    }

    /// Takes each commit whose sync was made one step on (its files move, or it is done); a sync
    /// that failed stops the daemon here.
    func advanceCommits(now: Timestamp) throws {
        if let failure = durability.failure {
            transport.cancelAll()
            throw recordNotMade(failure) ?? failure
        }
        var i = 0
        while i < commits.count {
            guard durability.isMade(commits[i].ticket) else {
                i += 1
                continue
            }
            if let work = try spool.continueCommit(&commits[i].commit) {
                commits[i].ticket = durability.handOver(work)
                continue  // made at once when the worker runs on this thread
            }
            let done = commits.remove(at: i)
            recorded(done.round, results: done.commit.results, now: now)
        }
        advanceRecords(now: now)
    }

    /// A round's finished items are durable where they went: they leave `recording` (a requeued
    /// one joins the due queue), and the log, the observers and the part logs are told.
    private func recorded(_ round: Round, results: [TransitionResult], now: Timestamp) {
        var vanished = Set<ItemID>()
        if !round.finished.isEmpty { intake.spaceFreed() }
        for (transition, result) in zip(round.finished, results) {
            let id = transition.record.id
            recording.remove(id)
            guard result != .moved else { continue }
            log.warning("\(id) vanished while being recorded (\(result))")
            items[id] = nil
            vanished.insert(id)
            observers.itemLeftQueue(id)
        }
        for entry in round.requeued where !vanished.contains(entry.id) { due.push(entry) }
        for event in round.outcomes where !vanished.contains(event.id) { observers.itemFinished(event) }
        // After the commit: a success, or a failure and the end its upload owes, is recorded
        // before its log goes (progress that outlives an attempt is state, durable before it counts).
        for (id, failed) in round.finishedMultipart where !failed { spool.partLogs.remove(id) }
        for owed in round.owedAborts { gaveUp(owed, now: now) }
        for message in round.messages { log.log(message.level, message.text) }
    }

    /// The longest the loop leaves a commit whose sync was made before it goes on with it.
    static let commitLookSeconds = 1.0

    /// When the loop must look at its commits again, at the latest (`wake`: what else it waits
    /// for). The worker wakes the loop as a sync is made, unless every upload slot is busy: an
    /// upload's end wakes it soon anyway, and a wake is a whole step, CPU that a daemon sending
    /// small files as fast as URLSession can takes from URLSession's threads; the loop then looks
    /// every `commitLookSeconds`. A sync made while the loop was deciding this is seen here, not
    /// missed.
    func nextCommitLook(now: Timestamp, wake: Timestamp) -> Timestamp {
        guard !commits.isEmpty || !records.isEmpty else { return wake }
        let slotsBusy = summary.stop == nil && uploads.count >= configuration.concurrency
        // A part-log record is waited for by its upload: its sync always wakes the loop.
        durability.loopWaits(wantingWake: !slotsBusy || !records.isEmpty)
        if commits.contains(where: { durability.isMade($0.ticket) }) || records.contains(where: { durability.isMade($0.ticket) }) {
            return now
        }
        return slotsBusy && records.isEmpty ? min(wake, now.adding(seconds: Engine.commitLookSeconds)) : wake
    }

    /// Waits for the commits in flight to be done (compaction needs every record complete).
    func waitForCommits(now: Timestamp) throws {
        while !commits.isEmpty {
            durability.waitForAll()
            try advanceCommits(now: now)
        }
    }
}
