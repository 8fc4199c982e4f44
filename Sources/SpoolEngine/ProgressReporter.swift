import SpoolSystem
import SpoolCore

/// `spoold drain`'s progress line on a terminal: items and bytes done of total, rate, ETA and
/// retries waiting, redrawn in place at most four times a second, ended with a newline at exit.
///
/// Log lines start with the same "clear line" prefix (`EventLog.linePrefix`), so a log line
/// replaces the progress line and the next redraw appears below it.
public final class ProgressReporter: EngineObserver {
    private let queue: QueueBytes
    private let write: (String) -> Void
    private var started: Timestamp?
    private var itemsDone = 0
    private var bytesDone: Int64 = 0
    private var nextDraw: Timestamp?
    private var drawn: String?

    /// `queue` must be an observer of the same engine, added before this one. `write` defaults to
    /// stderr.
    public init(queue: QueueBytes, write: @escaping (String) -> Void = ProgressReporter.writeToStandardError) {
        self.queue = queue
        self.write = write
    }

    public func engineStarted(_ engine: Engine, now: Timestamp) {
        started = now
        draw(engine, now: now)
    }

    public func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp? {
        if let due = nextDraw, now < due { return due }
        draw(engine, now: now)
        return nextDraw
    }

    public func engineFinished(_ engine: Engine, now: Timestamp) {
        draw(engine, now: now)
        if drawn != nil { write("\n") }
    }

    public func itemLeftQueue(_ id: ItemID) { itemsDone += 1 }

    public func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
        guard !stillQueued else { return }
        itemsDone += 1
        bytesDone += size
    }

    private func draw(_ engine: Engine, now: Timestamp) {
        nextDraw = now.adding(seconds: DrainProgress.minimumRedrawSeconds)
        var progress = DrainProgress()
        progress.itemsDone = itemsDone
        progress.itemsTotal = itemsDone + engine.uploads.count + engine.pendingCount + engine.incomingAnnounced.count
            + engine.incomingSettling.count
        progress.bytesDone = bytesDone
        progress.bytesTotal = bytesDone + queue.total
        progress.elapsedSeconds = started.map { $0.seconds(until: now) } ?? 0
        progress.retriesWaiting = engine.items.values.reduce(0) { $0 + ($1.state == .pending && $1.attemptsMade > 0 ? 1 : 0) }
        progress.paused = engine.outage != nil
        progress.throttledRate = engine.pacer.current(now: now).limit?.rate
        progress.heldUntil = engine.uploadsHeldUntil.map { engine.localClockText($0, now: now) }
        let text = progress.text
        guard text != drawn else { return }
        drawn = text
        write(DrainProgress.redrawPrefix + text)
    }

    public static func writeToStandardError(_ text: String) { FileDescriptor.standardError.write(text) }
}
