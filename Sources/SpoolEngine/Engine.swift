import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTransport

/// The daemon: ingests incoming/, claims due items, uploads them, and records each outcome.
///
/// A single-threaded event loop. Its only blocking point is `poll(2)` on the inotify descriptor
/// and a wake-up pipe (written by upload completions and stop requests), with a timeout at the
/// next due time. Every decision about an item is made by its `ItemLifecycle`; the engine
/// performs the returned actions through `Spool`, batching each round into one commit.
public final class Engine {
    let spool: Spool
    let transport: any UploadTransport
    let clock: any Clock
    let configuration: EngineConfiguration
    let log: EventLog
    /// Told of each upload and each item parked in failed/, once durable (`--on-success`...).
    let observer: (any ItemOutcomeObserver)?

    /// Every item that is pending or in flight (terminal items are not tracked).
    var items: [ItemID: ItemLifecycle] = [:]
    var due = DueQueue()
    var uploads: [ItemID: Upload] = [:]
    var outage: Outage?
    /// Paused while the spool's file system is full (see `Engine+Intake`).
    var intake = IntakeGate()
    var summary = RunSummary()
    var idGenerator: ItemIDGenerator

    /// incoming/ names to take in the next ingest: announced by close-write, renamed in with no
    /// writer, or found by a scan and judged complete (`Engine.considerScanned`).
    var incomingAnnounced = Set<String>()
    /// incoming/ names not yet trusted complete (too young, or still open for writing), with
    /// when to look at each again.
    var incomingSettling: [String: Timestamp] = [:]
    /// The last size and mtime seen of files whose writers cannot be asked about (no lease):
    /// the fallback rule takes such a file once they stay the same for `--settle` seconds.
    var incomingLooks: [String: IncomingLook] = [:]
    /// The lease fallback was announced in the log (once per daemon).
    var reportedLeaseFallback = false
    /// Names reported once as unusable (symlinks, FIFOs, folders...), so the log is not flooded.
    var reportedNames = Set<String>()
    var nextRescan: Timestamp
    /// `drain --max-time`: when to stop taking work.
    var runDeadline: Timestamp?
    /// Once stopped by the deadline: when uploads still in flight are cancelled.
    var cancelAt: Timestamp?
    /// Uploads in flight were cancelled on purpose: their "cancelled" outcomes hand the attempts
    /// back instead of counting them.
    var cancelling = false
    /// Requests started by this engine, for `configuration.recycleAfterRequests`.
    public internal(set) var requestsStarted = 0
    /// When the run began: `drain --max-time` counts from here (across recycles, too).
    var runStartedAt: Timestamp?
    /// SIGTERM/SIGINT as a descriptor the loop polls; each one read is a stop request.
    public var stopSignals: StopSignals?

    let watcher: InotifyWatcher
    var incomingWatch: Int32 = -1
    /// The watched folders of incoming/ by watch descriptor: `""` for incoming/ itself, then
    /// paths below it (`2026-11-23/cam7`).
    var incomingFolders: [Int32: String] = [:]
    /// A folder could not be watched (the inotify watch limit): said once.
    var reportedWatchLimit = false
    /// An event said incoming/ itself went away or a new one appeared: checked after the batch.
    var incomingMayBeReplaced = false
    var pendingWatch: Int32 = -1
    /// The spool root, watched for a new incoming/ (removed and made again, or moved in).
    var rootWatch: Int32 = -1

    let inbox: CompletionInbox
    /// Metrics, systemd notification, progress: told what happens, never asked what to do.
    public let observers = EngineObservers()
    /// `--max-spool-size`: decides whether a file in incoming/ may join the queue now.
    public var sizeGate: SpoolSizeGate?

    /// A file in incoming/ as last seen, for the fallback rule when no lease can be taken.
    struct IncomingLook: Equatable {
        var size: Int64
        var modifiedMilliseconds: Int64
        /// When this size and mtime were first seen.
        var since: Timestamp
    }

    /// An upload in progress: what it was started with, to finish its record.
    struct Upload {
        var metadata: ItemMetadata
        var startedAt: Timestamp
        var isProbe: Bool
    }

    /// The endpoint is unreachable: uploads pause, one probe at a time.
    struct Outage {
        var since: Timestamp
        var reason: String
        var nextProbe: Timestamp
        var probeInterval: Double
        var probeInFlight: Bool
    }

    public init(
        spool: Spool, transport: any UploadTransport, clock: any Clock, configuration: EngineConfiguration,
        log: EventLog, processTag: UInt64, observer: (any ItemOutcomeObserver)? = nil
    ) throws {
        self.observer = observer
        self.spool = spool
        self.transport = transport
        self.clock = clock
        self.configuration = configuration
        self.log = log
        self.idGenerator = ItemIDGenerator(processTag: processTag)
        self.inbox = try CompletionInbox()
        self.watcher = try InotifyWatcher()
        self.nextRescan = clock.now().adding(seconds: configuration.rescanSeconds)
    }

    /// Asks the loop to stop: the first request stops new work and lets uploads finish; the
    /// second cancels them and hands their attempts back. Safe from any thread. `drain
    /// --max-time` does the same by itself: it stops at the deadline and cancels after the grace.
    public func requestStop() { inbox.requestStop() }

    /// A stop handle for signal handlers, usable from any thread.
    public var stopHandle: @Sendable () -> Void {
        let inbox = self.inbox
        return { inbox.requestStop() }
    }

    var stopLevel: Int { inbox.stopLevel }

    /// Continues a run an earlier image of this process began (a recycle): its counts go on from
    /// `summary`, and `drain --max-time` counts from `startedAt`.
    public func resume(from summary: RunSummary, startedAt: Timestamp) {
        self.summary = summary
        self.summary.stop = nil
        runStartedAt = startedAt
    }

    /// Reads stop signals that arrived (each one is a stop request).
    func takeStopSignals() {
        guard let stopSignals else { return }
        for _ in 0..<stopSignals.take() { inbox.requestStop() }
    }

    /// Runs until stopped (or, for `drain`, until nothing is left), then returns what it did.
    public func run() throws -> RunSummary {
        // Counted from the start: recovery of a large spool is part of the time allowed.
        let startedAt = runStartedAt ?? clock.now()
        runDeadline = configuration.maximumRunSeconds.map { startedAt.adding(seconds: $0) }
        try recover()
        incomingWatch = try watcher.watch(spool.descriptor(.incoming), label: "\(spool.path)/incoming", mask: InotifyWatcher.incomingFolder)
        incomingFolders[incomingWatch] = ""
        rootWatch = try watcher.watch(spool.root, label: spool.path, mask: InotifyWatcher.created | InotifyWatcher.movedTo)
        pendingWatch = try watcher.watch(spool.descriptor(.pending), label: "\(spool.path)/pending", mask: InotifyWatcher.arrivals)
        try scanIncoming(now: clock.now())
        // Items added (by `enqueue`) after recovery listed pending/ and before the watch was set.
        try scanPending(now: clock.now())
        observers.engineStarted(self, now: clock.now())
        while true {
            let now = clock.now()
            takeStopSignals()
            noteStop(now: now)
            var round = Round()
            collectFinished(now: now, into: &round)
            let stopping = summary.stop != nil
            if !stopping {
                try takeWatcherEvents(now: now)
                try ingest(now: now)
                try collectClaims(now: now, into: &round)
            }
            try commitRound(round, now: now)
            if !stopping { noteRecycleDue(now: now) }
            if stopping {
                if uploads.isEmpty { break }
                if !cancelling, stopLevel > 1 || cancelAt.map({ now >= $0 }) == true {
                    log.info(
                        (stopLevel > 1 ? "second stop request" : summary.stop == .recycle ? "recycle grace over" : "--max-time grace over")
                            + ": cancelling \(uploads.count) upload(s); their attempts are handed back")
                    cancelling = true
                    transport.cancelAll()
                }
            } else if configuration.exitWhenIdle && isIdle {
                break
            }
            try compactIndexIfLarge()
            let timeout = observers.timeout(self, now: now, milliseconds: stopping ? stopPollTimeout(now: now) : pollTimeout(now: now))
            _ = Poller.wait(for: [watcher.fd, inbox.wakeup.readFD] + (stopSignals.map { [$0.fd] } ?? []), timeoutMilliseconds: timeout)
            inbox.wakeup.drain()
        }
        try spool.drainRemovals()
        observers.engineFinished(self, now: clock.now())
        return summary
    }

    /// Records the first reason to stop: a stop request, `drain --max-time` reached, or a
    /// recycle due. A stop request or the time limit overrides a recycle under way (the process
    /// then ends instead of re-executing), keeping the cancel time the recycle already set.
    func noteStop(now: Timestamp) {
        guard summary.stop == nil || summary.stop == .recycle else { return }
        if stopLevel > 0 {
            summary.stop = .requested
            cancelAt = nil  // uploads finish; a second request cancels them
        } else if let deadline = runDeadline, now >= deadline, let grace = configuration.stopGraceSeconds {
            summary.stop = .timeLimit
            cancelAt = min(cancelAt ?? now.adding(seconds: grace), now.adding(seconds: grace))
            log.info(
                "--max-time \(formatSeconds(configuration.maximumRunSeconds ?? 0)) reached: taking no new work"
                    + (uploads.isEmpty ? "" : "; \(uploads.count) upload(s) in flight get \(formatSeconds(grace)) to finish"))
        }
    }

    /// A recycle is due once `recycleAfterRequests` requests were started: take no new work, give
    /// uploads in flight `recycleGraceSeconds`, then return `Stop.recycle`.
    func noteRecycleDue(now: Timestamp) {
        guard summary.stop == nil, configuration.recycleAfterRequests > 0,
              requestsStarted >= configuration.recycleAfterRequests
        else { return }
        summary.stop = .recycle
        cancelAt = now.adding(seconds: configuration.recycleGraceSeconds)
        if !uploads.isEmpty {
            log.debug("recycle due after \(requestsStarted) requests: waiting for \(uploads.count) upload(s) in flight")
        }
    }

    /// While stopping: wake at least every second (a second signal, the end of the grace).
    func stopPollTimeout(now: Timestamp) -> Int32 {
        guard let cancelAt, !cancelling else { return 1000 }
        return Int32(clamping: max(0, min(1000, cancelAt.millisecondsSinceEpoch - now.millisecondsSinceEpoch)))
    }

    /// Nothing pending, nothing uploading, nothing waiting in incoming/.
    var isIdle: Bool { items.isEmpty && uploads.isEmpty && incomingAnnounced.isEmpty && incomingSettling.isEmpty }

    /// Milliseconds until something is due: the next pending item, the next probe, the next
    /// settle check or the periodic rescan. Never busy-polls.
    func pollTimeout(now: Timestamp) -> Int32 {
        var wake = nextRescan
        if let settle = nextSettleCheck { wake = min(wake, settle) }
        if let runDeadline { wake = min(wake, runDeadline) }
        // A paused intake's next try (at once after an upload freed space); announced files left
        // over by a batch limit are taken in the next round.
        if intake.pausedSince != nil { wake = min(wake, intake.nextTry ?? now) }
        else if !incomingAnnounced.isEmpty { wake = now }
        if let outage {
            // While a probe is out, its completion wakes us; don't spin on a past probe time.
            if !outage.probeInFlight { wake = min(wake, outage.nextProbe) }
        }
        else if uploads.count < configuration.concurrency, let next = due.first { wake = min(wake, next.notBefore) }
        let ms = wake.millisecondsSinceEpoch - now.millisecondsSinceEpoch
        return Int32(clamping: max(0, min(ms, 60_000)))
    }

    func compactIndexIfLarge() throws {
        guard spool.index.wantsCompaction else { return }
        try spool.compactIndex()
    }
}
