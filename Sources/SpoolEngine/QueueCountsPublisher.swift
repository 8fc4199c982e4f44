import Glibc
import SpoolCore
import SpoolStore

/// Keeps `SPOOL/counts` (`QueueCountsFile`) for `spoold status`: the queue's items, bytes, disk,
/// oldest items, shape by age and next due time, from the engine's memory and its running sums
/// (`QueueBytes`), never from pending/. Written at start, at most once a second while the
/// figures change (a change after a quiet spell at once, a stream of them once a second), when
/// the shape by age changes as time passes, and removed at the end.
public final class QueueCountsPublisher: EngineObserver {
    static let intervalSeconds = 1.0
    /// Writes allowed back to back after a quiet spell, before the once-a-second pace applies.
    static let burst = 3.0

    private let spool: Spool
    private let queue: QueueBytes
    private let limit: SpoolSizeLimit?
    private let log: EventLog
    private var written: QueueCountsFile.Contents?
    /// What the figures were made from, cheap to compare at every loop turn.
    private var writtenFrom: Signature?
    /// Writes allowed now (a token bucket: `burst` at most, one more each `intervalSeconds`).
    private var writes = QueueCountsPublisher.burst
    private var lastWrite: Timestamp?
    /// When the shape by age next changes with nothing else changing.
    private var agesChangeAt: Timestamp?
    private var writeFailed = false

    private struct Signature: Equatable {
        var pending: Int
        var inflight: Int
        var usage: QueueUsage?
        var payload: Int64
    }

    /// `queue` must be an observer of the same engine, added before this one.
    public init(spool: Spool, queue: QueueBytes, limit: SpoolSizeLimit?, log: EventLog) {
        (self.spool, self.queue, self.limit, self.log) = (spool, queue, limit, log)
    }

    public func engineStarted(_ engine: Engine, now: Timestamp) { publish(engine, now: now) }

    /// Rewrites the file when the figures changed (at most once a second) or the shape by age did;
    /// asks to be woken only for that: a daemon that waits with a queue it cannot send sleeps
    /// until its ages move to the next bucket.
    public func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp? {
        let changed = signature(engine) != writtenFrom
        let aged = agesChangeAt.map { now >= $0 } ?? false
        if changed || aged {
            let quiet = max(0, lastWrite.map { $0.seconds(until: now) } ?? 0)  // never negative: the clock may go back
            let allowed = writes + quiet / QueueCountsPublisher.intervalSeconds
            guard allowed >= 1 else { return now.adding(seconds: (1 - allowed) * QueueCountsPublisher.intervalSeconds) }
            writes = min(QueueCountsPublisher.burst, allowed) - 1
            publish(engine, now: now)
        }
        return agesChangeAt
    }

    public func engineFinished(_ engine: Engine, now: Timestamp) { QueueCountsFile.remove(in: spool) }

    private func signature(_ engine: Engine) -> Signature {
        Signature(pending: engine.pendingCount, inflight: engine.uploads.count, usage: queue.usage, payload: queue.total)
    }

    /// Rewrites the file if the figures changed.
    func publish(_ engine: Engine, now: Timestamp) {
        let contents = figures(engine, now: now)
        writtenFrom = signature(engine)
        lastWrite = now
        agesChangeAt = queue.nextShapeChange(after: now)
        guard written.map({ !$0.saysTheSame(as: contents) }) ?? true else { return }
        do {
            try QueueCountsFile.write(contents, in: spool)
            written = contents
            writeFailed = false
        } catch {
            if !writeFailed { log.warning("cannot write \(spool.path)/\(QueueCountsFile.fileName) for 'spoold status': \(error)") }
            writeFailed = true
        }
    }

    /// The figures as of `now`.
    func figures(_ engine: Engine, now: Timestamp) -> QueueCountsFile.Contents {
        queue.reconcile(engine)
        let usage = queue.usage
        let flying = queue.inFlight(engine)
        // The oldest of each: pending in memory, or the next to come in from beyond it.
        var oldestPending = engine.backlog.nextToLoad?.id
        var oldestInFlight: ItemID?
        for (id, lifecycle) in engine.items {
            if lifecycle.state == .pending {
                if oldestPending.map({ id < $0 }) ?? true { oldestPending = id }
            } else if engine.uploads[id] != nil, oldestInFlight.map({ id < $0 }) ?? true {
                oldestInFlight = id
            }
        }
        let pendingCount = engine.pendingCount
        // Before the first pass the backlog's earliest is a stand-in for "anything": not a time.
        let head = [engine.memoryHead()?.notBefore, engine.backlog.earliestOnDisk?.notBefore].compactMap { $0 }
            .filter { $0.millisecondsSinceEpoch != .min }.min()
        return QueueCountsFile.Contents(
            pid: getpid(), updated: now,
            pending: .init(
                count: pendingCount, payloadBytes: usage.map { max(0, $0.payloadBytes - flying.payloadBytes) },
                diskBytes: usage.map { max(0, $0.diskBytes - flying.diskBytes) }, oldest: pendingCount > 0 ? oldestPending : nil,
                estimated: queue.isEstimated),
            inflight: .init(
                count: engine.uploads.count, payloadBytes: flying.payloadBytes, diskBytes: flying.diskBytes, oldest: oldestInFlight),
            pendingByAge: queue.pendingShape(engine, now: now), nextDue: pendingCount > 0 ? head : nil, limit: limit)
    }
}
