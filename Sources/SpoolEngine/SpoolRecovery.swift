import SpoolCore
import SpoolStore
import SpoolSystem

/// Start-up recovery, shared by the daemon (`run`, `drain`) and `spoold check --repair`. The spool
/// reads its folders, sets aside what it cannot use and carries out the planner's repairs
/// (`Spool+Recovery`, which also holds the read-only half for `spoold check`); here the plan is
/// made (`RecoveryPlanner`), interrupted uploads are returned or parked, and the log is told.
public enum SpoolRecovery {
    /// How much of the spool recovery reads.
    public enum Scope: Sendable {
        /// Every folder, every item (`spoold check --repair`, a damaged index), a slice of ids at a
        /// time (`Spool.recoverySlices`).
        case whole
        /// What a stop may have left under way: inflight/, tmp/, and the items those hold or the
        /// index names (a daemon's start: its cost does not grow with the queue; the daemon's
        /// passes over pending/ read the rest).
        case inFlight
    }

    /// What recovery did and what it left queued.
    public struct Outcome {
        /// Items now in pending/ that recovery read, with their next-attempt times: with
        /// `.inFlight` those it read (under way, or named by the index); with `.whole` those it
        /// repaired, returned or the index named, not every item (the passes over pending/ read
        /// the rest, so memory holds no list of the spool).
        public var queued: [ItemID: ItemLifecycle] = [:]
        /// Items whose files were repaired (one note each).
        public var repaired = 0
        /// Interrupted uploads returned to pending/ (attempt kept).
        public var requeued = 0
        /// Interrupted uploads whose item used up a budget (`RetryPolicy.exhaustedBudget`): parked in failed/.
        public var failed = 0
        /// Those parked items, for `--on-failure` (told once the recovery's commit is durable).
        public var parked: [ItemOutcomeEvent] = []
        public var notes: [String] = []
        /// AbortMultipartUpload requests still owed (`parts/aborts.log`), for the daemon to send.
        public var owedAborts: [OwedAbort] = []
    }

    /// Reads the index, plans repairs from the folders, does them, returns interrupted uploads to
    /// pending/ (count kept, the attempt recorded as `interrupted`) or failed/ (a budget used up),
    /// and compacts the index. Idempotent: a crash anywhere in here is just another crash, planned
    /// again from the files at the next start.
    public static func run(
        spool: Spool, policy: RetryPolicy, now: Timestamp, log: EventLog, scope: Scope = .whole,
        filesPerSlice: Int = Spool.recoveryFilesPerSlice
    ) throws -> Outcome {
        // A live `enqueue` (or `retry`, `purge`) may be staging in tmp/ or between the renames of
        // an add: its files are not orphans. Wait for it, and keep the next one out until done.
        try spool.excludingStagers {
            try runExcludingStagers(spool: spool, policy: policy, now: now, log: log, scope: scope, filesPerSlice: filesPerSlice)
        }
    }

    private static func runExcludingStagers(
        spool: Spool, policy: RetryPolicy, now: Timestamp, log: EventLog, scope: Scope, filesPerSlice: Int
    ) throws -> Outcome {
        let opened = try spool.index.openAndRecover(now: now)
        if let aside = opened.report.notAFileSetAsideAs {
            log.warning("index.wal was not a regular file; set it aside as \(aside), started a fresh index and rebuilt the state from the folders")
        }
        if opened.report.truncatedBytes > 0 {
            log.warning("index.wal: cut \(opened.report.truncatedBytes) bytes of torn tail (the normal trace of a crash)")
        }
        if let aside = opened.report.setAsideAs {
            log.warning("index.wal was damaged before its end; kept it as \(aside) and rebuilt the state from the folders")
        }
        // An index that was damaged or not a file vouches for nothing: the folders are read whole.
        var scope = scope
        if opened.report.setAsideAs != nil || opened.report.notAFileSetAsideAs != nil { scope = .whole }
        // Read whole, the spool is read a slice of ids at a time, so recovery holds one slice of
        // it whatever it holds; each id is planned on its own, so the repairs are the same.
        let slices = scope == .whole ? try spool.recoverySlices(filesPerSlice: filesPerSlice) : [IDSlice.all]
        let logged = scope == .whole ? spool.partLogs.loggedItems() : []
        var keptLogs = Set<ItemID>()
        var readInFlight = Set<ItemID>()
        var planned: [ItemID: ItemLocation] = [:]
        var outcome = Outcome()
        var pendingCount = 0
        for slice in slices {
            let files = switch scope {
            case .whole: try spool.recoveryScan(of: slice, now: now) { tell($0, log) }
            case .inFlight: try spool.inFlightRecoveryScan(lastRecords: opened.lastByItem, now: now) { tell($0, log) }
            }
            let records = slices.count == 1 ? opened.lastByItem : opened.lastByItem.filter { slice.contains($0.key) }
            let plan = RecoveryPlanner.plan(files: files, lastRecords: records)
            for note in plan.notes { log.warning("recovery: \(note)") }
            try spool.perform(plan.repairs, now: now)
            outcome.repaired += plan.notes.count
            outcome.notes += plan.notes
            switch scope {
            case .inFlight:
                planned = plan.items
                readInFlight = Set(files.map(\.name.id)).union(opened.lastByItem.keys)
            case .whole:
                // Kept of a whole read: what recovery touched (the passes over pending/ read the rest).
                let touched = Set(plan.repairs.map(SpoolRecovery.id(of:))).union(records.keys)
                for (id, location) in plan.items {
                    if location.state == .pending { pendingCount += 1 }
                    if location.state == .inflight || touched.contains(id) { planned[id] = location }
                    if logged.contains(id), location.state != .done { keptLogs.insert(id) }
                }
            }
        }

        var interrupted: [SpoolTransition] = []
        outcome.queued.reserveCapacity(planned.count)
        var inflight: [(ItemID, ItemLocation)] = []
        for (id, location) in planned {
            switch location.state {
            case .pending where location.attempt == 0:
                // Never tried: due at once. Only a tried item's json mtime holds a future time, so
                // a fresh queue of 100,000 items costs no stat call here.
                outcome.queued[id] = ItemLifecycle(location: location, notBefore: id.createdAt ?? now)
            case .pending:
                let json = ItemFileName(id: id, attempt: location.attempt, kind: .json)
                let mtime = (try? spool.status(of: json, at: location))?.modifiedMilliseconds ?? now.millisecondsSinceEpoch
                outcome.queued[id] = ItemLifecycle(location: location, notBefore: Timestamp(millisecondsSinceEpoch: mtime))
            case .inflight:
                inflight.append((id, location))
            case .failed, .done:
                break
            }
        }
        for (id, location) in inflight.sorted(by: { $0.0 < $1.0 }) {
            var lifecycle = ItemLifecycle(location: location, notBefore: now)
            var metadata = try? spool.readMetadata(id, at: location)
            // Unreadable metadata counts every earlier attempt as interrupted; the claim parks it anyway.
            let earlier = AttemptTally(ended: location.attempt - 1, history: metadata?.attempts ?? [])
            let action = lifecycle.recoverInterrupted(policy: policy, earlier: earlier, now: now)
            metadata?.attempts.append(AttemptRecord(
                number: location.attempt, startedAt: now, finishedAt: now, outcome: "interrupted",
                error: "spoold stopped during this attempt (crash or kill); it counts against --max-interrupted", code: "interrupted"))
            switch action {
            case .requeue(_, _, let notBefore):
                interrupted.append(SpoolTransition(action.record(for: id), metadata: metadata, notBefore: notBefore))
                outcome.queued[id] = lifecycle
                outcome.requeued += 1
            case .fail(_, _, let reason):
                metadata?.setFailure(reason)
                interrupted.append(SpoolTransition(action.record(for: id), metadata: metadata))
                outcome.failed += 1
                outcome.parked.append(ItemOutcomeEvent(
                    kind: .failed, id: id, originalName: metadata?.originalName ?? "", httpStatus: nil,
                    size: metadata?.size ?? 0, reason: reason.text))
            default:
                preconditionFailure("recovery only requeues or fails")
            }
        }
        if !interrupted.isEmpty {
            _ = try spool.commit(interrupted)
            log.info("recovery: \(interrupted.count) upload(s) interrupted by the last stop were returned to pending/ (attempts kept)")
        }
        CrashPoint.recoveryAfterRequeue.reached()
        try spool.compactIndex()
        // Part logs of items still here (pending, inflight, failed: `retry` may resume them) stay;
        // the others' items were uploaded, purged or removed by hand. Read in part, recovery
        // knows that only of the items it read: those the index names as uploaded or purged.
        switch scope {
        case .whole:
            let removed = spool.partLogs.removeLogs(keeping: keptLogs)
            if removed > 0 { log.info("recovery: removed \(removed) part log(s) of items no longer in the spool") }
        case .inFlight:
            for id in readInFlight where planned[id].map({ $0.state == .done }) ?? true { spool.partLogs.remove(id) }
        }
        let aborts = try spool.partLogs.aborts.tidy(tmp: spool.descriptor(.tmp))
        if aborts.damagedLines > 0 {
            log.warning("recovery: \(spool.path)/parts/\(AbortLog.fileName) has \(aborts.damagedLines) damaged line(s), left as they are (an abort recorded there may be lost: a lifecycle rule removes such uploads); \(aborts.owed) abort(s) read from it")
        }
        if aborts.owed > 0 {
            log.info("recovery: \(aborts.owed) AbortMultipartUpload request(s) still owed to the store (\(AbortLog.fileName)); sending them")
        }
        outcome.owedAborts = spool.partLogs.aborts.owed
        if scope == .whole { log.info("spool \(spool.path): \(pendingCount + outcome.requeued) item(s) queued") }
        return outcome
    }

    /// What the spool did with an entry that is no item's, told as a warning (the removal of
    /// tmp/'s strays, ours and unfinished, goes without a word).
    static func tell(_ finding: RecoveryFinding, _ log: EventLog) {
        switch finding {
        case .tmpStray, .notRegular:
            break
        case .setAside(let name, let type, let aside):
            log.warning("\(name) is not a regular file (\(type)); set it aside as \(aside)")
        case .notSetAside(let name, let type, let reason):
            log.warning("\(name) is not a regular file (\(type)); could not set it aside (\(reason)); left alone")
        case .notAnItemFile(let name):
            log.warning("\(name) is not an item file (expected <id>.a<N>.json/.blob); left alone")
        }
    }

    /// The item a repair is for.
    static func id(of repair: RecoveryPlan.Repair) -> ItemID {
        switch repair {
        case .moveFile(let name, _, _, _), .removeFile(let name, _): name.id
        case .recreateMetadata(let id, _), .quarantineMissingBlob(let id, _, _): id
        }
    }
}
