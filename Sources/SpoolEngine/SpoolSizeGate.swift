import SpoolCore
import SpoolStore

/// `--max-spool-size` in the daemon: lets a file from incoming/ join the queue only while the
/// queued payload bytes are below the limit (`block`: the file waits, announced and untouched),
/// or first deletes the oldest pending items to make room (`drop-oldest`).
///
/// Logs once when the spool becomes full and once when it has room again (below 90% of the
/// limit, so a queue hovering at the limit does not flood the log), and keeps `SPOOL/size-limit`
/// meanwhile for `spoold status`.
public final class SpoolSizeGate: EngineObserver {
    /// Full ends below this share of the limit.
    static let roomAgainShare = 0.9

    let limit: SpoolSizeLimit
    private let queue: QueueBytes
    private let spool: Spool
    private let log: EventLog
    /// Bytes admitted in this loop turn but not yet in `queue` (they join after the batch).
    private var reserved: Int64 = 0
    private var refusedThisTurn = false
    /// Pending ids, newest first, built once per turn when something must be dropped.
    private var dropOrder: [ItemID]?
    /// Requeued in this turn: their move back to pending/ is not committed yet, so not droppable.
    private var finishedThisTurn = Set<ItemID>()
    private var fullSince: Timestamp?

    /// `queue` must be an observer of the same engine, added before this one.
    public init(limit: SpoolSizeLimit, queue: QueueBytes, spool: Spool, log: EventLog) {
        (self.limit, self.queue, self.spool, self.log) = (limit, queue, spool, log)
    }

    /// Whether incoming/`name` may be ingested now; with `drop-oldest`, makes room first.
    func admits(_ name: String, engine: Engine, now: Timestamp) throws -> Bool {
        let size = (try? spool.status(of: name, in: .incoming))?.size ?? 0
        if limit.whenFull == .dropOldest { try makeRoom(engine: engine, now: now) }
        guard limit.admits(queued: queue.total + reserved) else {
            refusedThisTurn = true
            return false
        }
        reserved += size
        return true
    }

    /// Whether files waiting in incoming/ cannot join the queue now: it is at the limit and no
    /// pending item may be dropped to make room (`block`, or all of them in flight). They are
    /// looked at again when that changes: an upload ends (its completion wakes the engine) or
    /// an item leaves the queue.
    func holdsIntake(_ engine: Engine) -> Bool {
        guard !limit.admits(queued: queue.total) else { return false }
        return limit.whenFull == .block || engine.items.count <= engine.uploads.count
    }

    /// An admitted file joined the queue at once (a direct upload): its bytes are in `queue` now,
    /// no longer reserved.
    func joinedQueue(bytes: Int64) { reserved = max(0, reserved - bytes) }

    /// Deletes the oldest pending items (never one in flight) through the purge transition until
    /// the queue is below the limit, logging and counting each.
    private func makeRoom(engine: Engine, now: Timestamp) throws {
        var drops: [SpoolTransition] = []
        while limit.mustDrop(queued: queue.total + reserved), let id = nextDroppable(engine) {
            guard let purge = engine.items[id]?.purge() else { continue }
            let itemSize = queue.size(of: id) ?? 0
            drops.append(SpoolTransition(purge.record(for: id)))
            engine.items[id] = nil
            engine.observers.itemDropped(id)
            log.warning("spool full (--max-spool-size \(limit.bytes) B): dropped the oldest pending item \(id) (\(itemSize) B) to make room")
        }
        guard !drops.isEmpty else { return }
        for (transition, result) in zip(drops, try spool.commit(drops)) where result != .moved {
            log.warning("\(transition.record.id) vanished while being dropped (\(result))")
        }
    }

    private func nextDroppable(_ engine: Engine) -> ItemID? {
        if dropOrder == nil {
            dropOrder = engine.items.compactMap { $0.value.state == .pending ? $0.key : nil }.sorted(by: >)
        }
        while let id = dropOrder?.popLast() {
            if engine.items[id]?.state == .pending, !finishedThisTurn.contains(id) { return id }
        }
        return nil
    }

    public func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
        if stillQueued { finishedThisTurn.insert(id) }
    }

    public func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp? {
        let refused = refusedThisTurn
        let couldDrop = limit.whenFull == .dropOldest && engine.items.count > engine.uploads.count
        (reserved, refusedThisTurn, dropOrder) = (0, false, nil)
        finishedThisTurn.removeAll()
        let queued = queue.total
        if fullSince == nil, refused || limit.isFull(queued: queued) {
            fullSince = now
            let what = limit.whenFull == .block ? "new files wait in incoming/" : "the oldest pending items are dropped to make room"
            log.warning("spool full: \(queued) B queued, --max-spool-size \(limit.bytes) B; \(what)")
            do {
                try SpoolFullMarker.write(
                    .init(since: now, limitBytes: limit.bytes, queuedBytes: queued, whenFull: limit.whenFull.rawValue), in: spool)
            } catch {
                log.warning("cannot write \(spool.path)/\(SpoolFullMarker.fileName) for 'spoold status': \(error)")
            }
        } else if !refused {
            noteRoomAgain(queued: queued, now: now)
        }
        // A file refused only because this turn's items were not queued yet: try again at once.
        return refused && couldDrop ? now : nil
    }

    /// The last step of a run does not wait: a queue that emptied in it has room all the same.
    public func engineFinished(_ engine: Engine, now: Timestamp) {
        guard !refusedThisTurn else { return }
        noteRoomAgain(queued: queue.total, now: now)
    }

    /// Full ends (said once, marker removed) when the queue is below `roomAgainShare` of the limit.
    private func noteRoomAgain(queued: Int64, now: Timestamp) {
        guard let since = fullSince, Double(queued) < Double(limit.bytes) * SpoolSizeGate.roomAgainShare else { return }
        fullSince = nil
        SpoolFullMarker.remove(in: spool)
        log.info("spool has room again after \(formatSeconds(since.seconds(until: now))) (\(queued) B queued)")
    }
}
