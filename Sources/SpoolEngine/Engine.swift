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

    /// Every item that is pending or in flight (terminal items are not tracked).
    var items: [ItemID: ItemLifecycle] = [:]
    var due = DueQueue()
    var uploads: [ItemID: Upload] = [:]
    var outage: Outage?
    var summary = RunSummary()
    var idGenerator: ItemIDGenerator

    /// incoming/ names announced by inotify (close-write, moved-to): taken at once.
    var incomingAnnounced = Set<String>()
    /// incoming/ names found by a scan and still too young to be trusted complete.
    var incomingSettling = Set<String>()
    /// Names reported once as unusable (symlinks, FIFOs, folders...), so the log is not flooded.
    var reportedNames = Set<String>()
    var nextRescan: Timestamp
    var nextSettleCheck: Timestamp?

    let watcher: InotifyWatcher
    var incomingWatch: Int32 = -1
    var pendingWatch: Int32 = -1

    let inbox: CompletionInbox
    /// Metrics, systemd notification, progress: told what happens, never asked what to do.
    public let observers = EngineObservers()
    /// `--max-spool-size`: decides whether a file in incoming/ may join the queue now.
    public var sizeGate: SpoolSizeGate?

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
        log: EventLog, processTag: UInt64
    ) throws {
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
    /// second cancels them and hands their attempts back. Safe from any thread.
    public func requestStop() { inbox.requestStop() }

    /// A stop handle for signal handlers, usable from any thread.
    public var stopHandle: @Sendable () -> Void {
        let inbox = self.inbox
        return { inbox.requestStop() }
    }

    var stopLevel: Int { inbox.stopLevel }

    /// Runs until stopped (or, for `drain`, until nothing is left), then returns what it did.
    public func run() throws -> RunSummary {
        try recover()
        incomingWatch = try watcher.watch(spool.descriptor(.incoming), label: "\(spool.path)/incoming")
        pendingWatch = try watcher.watch(spool.descriptor(.pending), label: "\(spool.path)/pending", mask: InotifyWatcher.arrivals)
        try scanIncoming(now: clock.now())
        observers.engineStarted(self, now: clock.now())
        var cancelled = false
        while true {
            let now = clock.now()
            var round = Round()
            collectFinished(now: now, into: &round)
            let stopping = stopLevel > 0
            if !stopping {
                try takeWatcherEvents(now: now)
                try ingest(now: now)
                try collectClaims(now: now, into: &round)
            }
            try commitRound(round, now: now)
            if stopping {
                if uploads.isEmpty { break }
                if stopLevel > 1 && !cancelled {
                    log.info("second stop request: cancelling \(uploads.count) upload(s); their attempts are handed back")
                    cancelled = true
                    transport.cancelAll()
                }
            } else if configuration.exitWhenIdle && isIdle {
                break
            }
            try compactIndexIfLarge()
            let timeout = observers.timeout(self, now: now, milliseconds: stopping ? 1000 : pollTimeout(now: now))
            _ = Poller.wait(for: [watcher.fd, inbox.wakeup.readFD], timeoutMilliseconds: timeout)
            inbox.wakeup.drain()
        }
        try spool.drainRemovals()
        observers.engineFinished(self, now: clock.now())
        return summary
    }

    /// Nothing pending, nothing uploading, nothing waiting in incoming/.
    var isIdle: Bool { items.isEmpty && uploads.isEmpty && incomingAnnounced.isEmpty && incomingSettling.isEmpty }

    /// Milliseconds until something is due: the next pending item, the next probe, the next
    /// settle check or the periodic rescan. Never busy-polls.
    func pollTimeout(now: Timestamp) -> Int32 {
        var wake = nextRescan
        if let settle = nextSettleCheck { wake = min(wake, settle) }
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
