import SpoolCore
import SpoolStore

/// `--max-spool-size` and `--max-items` in the daemon: lets a file from incoming/ join the queue
/// only while the queue takes less disk and holds fewer items than the limits (`block`: the file
/// waits, announced and untouched), or first deletes the oldest pending items to make room
/// (`drop-oldest`). While the queue beyond memory is still being counted at start
/// (`QueueBytes.usage` nil), files wait.
///
/// Logs once when the spool becomes full and once when it has room again (below 90% of each
/// limit, so a queue hovering at a limit does not flood the log), and keeps `SPOOL/size-limit`
/// meanwhile for `spoold status`.
public final class SpoolSizeGate: EngineObserver {
    /// Full ends below this share of the limit.
    static let roomAgainShare = 0.9

    let limit: SpoolSizeLimit
    private let queue: QueueBytes
    private let spool: Spool
    private let log: EventLog
    /// What was admitted in this loop turn but is not yet in `queue` (it joins after the batch),
    /// by name in incoming/.
    private var reservedByName: [String: QueueUsage] = [:]
    private var reserved = QueueUsage()
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
        guard queue.usage != nil else { return false }  // still counting: wait for it (no "full")
        let file = try? spool.status(of: name, in: .incoming)
        if limit.whenFull == .dropOldest { try makeRoom(engine: engine, now: now) }
        guard let queued = queue.usage, limit.admits(queued + reserved) else {
            refusedThisTurn = true
            return false
        }
        // Moved in, the file keeps its blocks; its json will take about one more.
        let usage = QueueUsage(
            items: 1, payloadBytes: file?.size ?? 0, diskBytes: (file?.allocatedBytes ?? 0) + QueueUsage.jsonDiskEstimate)
        reserved += usage
        reservedByName[name] = usage
        return true
    }

    /// Whether files waiting in incoming/ cannot join the queue now: it is at the limit and no
    /// pending item may be dropped to make room (`block`, or all of them in flight). They are
    /// looked at again when that changes: an upload ends (its completion wakes the engine) or
    /// an item leaves the queue.
    func holdsIntake(_ engine: Engine) -> Bool {
        guard let queued = queue.usage else { return true }  // counting: its end wakes the engine
        guard !limit.admits(queued) else { return false }
        return limit.whenFull == .block || engine.items.count <= engine.uploads.count
    }

    /// An admitted file joined the queue at once (a direct upload): it is in `queue` now, no
    /// longer reserved.
    func joinedQueue(_ name: String) {
        guard let usage = reservedByName.removeValue(forKey: name) else { return }
        reserved = (reserved - usage).clamped
    }

    /// Deletes the oldest pending items (never one in flight) through the purge transition until
    /// the queue is below the limit, logging and counting each.
    private func makeRoom(engine: Engine, now: Timestamp) throws {
        var drops: [SpoolTransition] = []
        while let queued = queue.usage, limit.mustDrop(queued + reserved), let id = nextDroppable(engine) {
            // One being recorded (requeued, its files not yet back in pending/) is not droppable.
            guard !engine.recording.contains(id), let purge = engine.items[id]?.purge() else { continue }
            let itemSize = queue.size(of: id) ?? 0
            drops.append(SpoolTransition(purge.record(for: id)))
            engine.items[id] = nil
            engine.observers.itemDropped(id)
            log.warning("spool full (\(describe(queued + reserved))): dropped the oldest pending item \(id) (\(itemSize) B) to make room")
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
        (reserved, refusedThisTurn, dropOrder) = (QueueUsage(), false, nil)
        reservedByName.removeAll()
        finishedThisTurn.removeAll()
        guard let queued = queue.usage else { return nil }
        if fullSince == nil, refused || limit.isFull(queued) {
            fullSince = now
            let what = limit.whenFull == .block ? "new files wait in incoming/" : "the oldest pending items are dropped to make room"
            log.warning("spool full: \(describe(queued)); \(what)")
            do {
                try SpoolFullMarker.write(
                    .init(
                        since: now, limitBytes: limit.bytes, queuedBytes: queued.diskBytes, whenFull: limit.whenFull.rawValue,
                        limitItems: limit.items, queuedItems: queued.items),
                    in: spool)
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
        guard !refusedThisTurn, let queued = queue.usage else { return }
        noteRoomAgain(queued: queued, now: now)
    }

    /// Full ends (said once, marker removed) when the queue is below `roomAgainShare` of each limit.
    private func noteRoomAgain(queued: QueueUsage, now: Timestamp) {
        guard let since = fullSince, limit.hasRoom(queued, share: SpoolSizeGate.roomAgainShare) else { return }
        fullSince = nil
        SpoolFullMarker.remove(in: spool)
        log.info("spool has room again after \(formatSeconds(since.seconds(until: now))) (\(queued.items) item(s), \(queued.diskBytes) B on disk)")
    }

    /// `1200 item(s) of --max-items 1000, 9830400 B on disk of --max-spool-size 10000000 B`.
    private func describe(_ queued: QueueUsage) -> String {
        var parts: [String] = []
        if let items = limit.items { parts.append("\(queued.items) item(s) queued, --max-items \(items)") }
        if let bytes = limit.bytes { parts.append("\(queued.diskBytes) B on disk, --max-spool-size \(bytes) B") }
        return parts.joined(separator: "; ")
    }
}
