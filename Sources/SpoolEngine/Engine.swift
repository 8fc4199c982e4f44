import Dispatch
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTransport

/// The daemon: ingests incoming/, claims due items, uploads them, and records each outcome.
///
/// A step and a driver. `step(now:events:)` runs one round given the time and what arrived
/// (inotify events, upload completions, stop requests) and returns when to wake next; `run()` is
/// the thin production driver: it waits in `poll(2)` (`SystemEventSource`) until that time or an
/// event, and steps again. Tests drive the same step with a manual clock (`EmbeddedEngine`).
/// Every decision about an item is made by its `ItemLifecycle`; the engine performs the returned
/// actions through `Spool`, batching each round into one commit.
public final class Engine {
    let spool: Spool
    let transport: any UploadTransport
    let clock: any Clock
    let configuration: EngineConfiguration
    let log: EventLog

    /// The items in memory: pending (at most `configuration.queueMemory` with those in flight) or
    /// in flight. The rest of the queue waits in pending/ (`backlog`, `Engine+Backlog`).
    var items: [ItemID: ItemLifecycle] = [:]
    var due = DueQueue()
    /// What waits in pending/ beyond memory, and when a pass must read it.
    var backlog: Backlog
    /// The runs of the last pass and their reader; the entries not read yet (an estimate).
    var backlogRuns: BacklogRuns?
    var backlogReader: BacklogReader?
    var runsLeft = 0
    var passCount = 0
    /// Whether the start said how many items the spool holds.
    var queueAnnounced = false
    /// Items the pass under way will write into its runs, as the start's listing counted them.
    var passWillFind = 0
    /// While the start's pass also counts pending/ for an observer (`EngineObserver.pendingCensus`):
    /// the ids it leaves out, those in memory when it began.
    public internal(set) var pendingCensusExcluding: Set<ItemID>?
    /// The first items in line as the last image knew them (a recycle), taken by the start
    /// instead of a listing of pending/ (`readPendingAtStart`).
    var handedLine: RecycleLine?
    /// What a run that ended for a recycle hands to the next image (`handOverLine`).
    public private(set) var lineForNextImage: RecycleLine?
    /// When a pass that failed (a full disk for its runs) is tried again.
    var passRetryAt: Timestamp?
    let passInbox = PassInbox()
    /// Items this engine put into pending/ but not into memory, until the inotify events of
    /// their renames were read: not to be adopted as an operator's.
    var ownArrivals = Set<ItemID>()
    /// Runs a pass over pending/: on a thread of its own in the daemon, at once in tests.
    let runPass: @Sendable (@escaping @Sendable () -> Void) -> Void
    var uploads: [ItemID: Upload] = [:]
    /// Rounds whose commits are on their way to disk, oldest first (`Engine+Durability`).
    var commits: [CommitInFlight] = []
    /// Rounds whose finished items are not all durable where they went yet.
    public var commitsInFlight: Int { commits.count }
    /// Finished items whose new place is not durable yet: a state of their own (`Engine+Durability`).
    var recording = Set<ItemID>()
    /// Part-log records whose syncs are on their way to disk, oldest first (`Engine+Records`).
    var records: [RecordInFlight] = []
    /// When tus uploads' noted offsets are written next, at the earliest (`Engine+Records`).
    var nextOffsetWrite = Timestamp(millisecondsSinceEpoch: 0)
    /// Makes the commits' syncs away from the loop.
    let durability: DurabilityWorker
    /// Reachable, or paused by an outage with one probe at a time.
    var endpoint = EndpointState.reachable
    /// The daemon's request rate, limited while the endpoint throttles (`Engine+Throttling`);
    /// shared with the transport's multipart uploads.
    public let pacer: RequestPacer
    /// The limit as last logged and written to `SPOOL/throttled`, while there is one.
    var shownLimit: ShownLimit?
    /// Paused while the spool's file system is full (see `Engine+Intake`).
    var intake = IntakeGate()
    var summary = RunSummary()
    var idGenerator: ItemIDGenerator

    /// incoming/ names to take in the next ingest: announced by close-write, renamed in with no
    /// writer, or found by a scan and judged complete (`Engine.considerScanned`).
    var incomingAnnounced = Set<String>()
    /// The same names in the order they were announced, read from `announcedHead` (a name
    /// since taken or forgotten is skipped there), so a round takes the next few without
    /// sorting the whole backlog (`takeAnnounced`).
    var announcedOrder: [String] = []
    var announcedHead = 0
    /// incoming/ names not yet trusted complete (too young, or still open for writing), with
    /// when to look at each again.
    var incomingSettling: [String: Timestamp] = [:]
    /// The last size and mtime seen of files whose writers cannot be asked about (no lease):
    /// the fallback rule takes such a file once they stay the same for `--settle` seconds.
    var incomingLooks: [String: IncomingLook] = [:]
    /// The lease fallback was announced in the log (once per daemon).
    var reportedLeaseFallback = false
    /// Names reported once as unusable (symlinks, FIFOs, folders...), so the log is not flooded.
    /// A name leaves when its file is renamed away, or when inotify announces a new file under it.
    var reportedNames = Set<String>()
    /// Regular files among `reportedNames` that could not be taken (unreadable), as they were
    /// then: a rescan that finds one changed takes it again (`considerScanned`).
    var refusedLooks: [String: RefusedLook] = [:]
    var nextRescan: Timestamp
    /// `drain --max-time`: when to stop taking work.
    var runDeadline: Timestamp?
    /// Once stopped by the deadline: when uploads still in flight are cancelled.
    var cancelAt: Timestamp?
    /// Uploads in flight were cancelled on purpose: their cancelled outcomes
    /// (`UploadOutcome.cancelled`) hand the attempts back instead of counting them.
    var cancelling = false
    /// `--upload-window`: where the windows stand, as last read (`Engine+Timetables`); nil without.
    var window: WindowState?
    /// Uploads a closing window cancelled (`--window-cuts`): their cancelled outcomes hand the
    /// attempts back instead of counting them.
    var windowCut = Set<ItemID>()
    /// The `--limit-rate` timetable's rate as last logged.
    var shownRate: RateState?
    /// Requests started by this engine, for `recycleTrigger`.
    public internal(set) var requestsStarted = 0
    /// When to recycle (`configuration.recycle`, with the reference memory noted so far).
    var recycleTrigger: RecycleTrigger
    /// Why the loop wound down with `Stop.recycle`, once it did.
    public internal(set) var recycleReason: RecycleTrigger.Reason?
    /// This process's resident size in KiB after a heap trim (`ProcessImage`; injected in tests).
    let readResidentKiB: () -> Int?
    /// When the run began: `drain --max-time` counts from here (across recycles, too).
    var runStartedAt: Timestamp?

    /// inotify watches, completions and stop requests (the kernel's, or a test's script).
    let events: any EngineEventSource
    /// Stop requests seen by the last step.
    var stopLevel = 0
    var incomingWatch: Int32 = -1
    /// The watched folders of incoming/ by watch descriptor: `""` for incoming/ itself, then
    /// paths below it (`2026-11-23/cam7`).
    var incomingFolders: [Int32: String] = [:]
    /// The spool's file system keeps no extended attributes, so files are never sent directly
    /// (`Engine+Direct`): found at the first try, said once.
    var directUnsupported = false
    /// A folder could not be watched (the inotify watch limit): said once.
    var reportedWatchLimit = false
    /// incoming/ has more folders than `--max-watches`: said once.
    var reportedWatchCap = false
    /// An event said incoming/ itself went away or a new one appeared: checked after the batch.
    var incomingMayBeReplaced = false
    var pendingWatch: Int32 = -1
    /// The spool root, watched for a new incoming/ (removed and made again, or moved in).
    var rootWatch: Int32 = -1

    /// AbortMultipartUpload requests owed to the store, and when to send each (`Engine+Multipart`).
    var aborts = AbortSchedule()

    /// Metrics, systemd notification, progress, hooks: told what happens, never asked what to do.
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

    /// What identifies a refused file's state: any change (chmod, chown, a rewrite, a new file
    /// under the name) is a reason to try it again.
    struct RefusedLook: Equatable {
        var inode: UInt64
        var owner: UInt32
        var permissions: UInt32
        var size: Int64
        var modifiedMilliseconds: Int64
        /// A hard-linked file refused whose other names went: taken once it has one.
        var linkCount: Int

        init(_ status: FileStatus) {
            (inode, owner, permissions) = (status.inode, status.owner, status.permissions)
            (size, modifiedMilliseconds, linkCount) = (status.size, status.modifiedMilliseconds, status.linkCount)
        }
    }

    /// An upload in progress: what it was started with, to finish its record.
    struct Upload {
        var metadata: ItemMetadata
        var startedAt: Timestamp
        var isProbe: Bool
        /// Whether the attempt keeps progress in a part log (how it was taken, claimed or direct,
        /// is the item's `ItemLifecycle.take`).
        var progress = Progress.none
        /// Where the attempt went, as the log names it once per upload (`URLPathText`); nil
        /// before its request was built.
        var path: String?
    }

    /// The progress an upload keeps beyond its attempt.
    enum Progress {
        /// None: one request.
        case none
        /// An S3 multipart upload or a tus upload with a part log (whose steps tell the request
        /// rate their answers themselves), recorded through the engine (`Engine+Records`).
        case partLog(UploadRecorder)
        /// A direct upload's part log, writing without syncs until its blob is made durable at
        /// `durableBy` (`Engine+Direct`); then `.partLog`.
        case deferredPartLog(UploadRecorder, durableBy: Timestamp)

        var keepsPartLog: Bool { if case .none = self { false } else { true } }

        /// What records the upload's progress, if it keeps any.
        var recorder: UploadRecorder? {
            switch self {
            case .none: nil
            case .partLog(let recorder), .deferredPartLog(let recorder, _): recorder
            }
        }

        /// When a direct upload's part log is to be made durable, if it waits for that.
        var durableBy: Timestamp? { if case .deferredPartLog(_, let by) = self { by } else { nil } }
    }

    /// The outage, while the endpoint is unreachable (for the observers).
    var outage: EndpointState.Outage? { endpoint.outage }

    public init(
        spool: Spool, transport: any UploadTransport, clock: any Clock, configuration: EngineConfiguration,
        log: EventLog, processTag: UInt64,
        events: (any EngineEventSource)? = nil, pacer: RequestPacer? = nil,
        residentKiB: @escaping () -> Int? = ProcessImage.trimmedResidentKilobytes,
        runPass: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.global(qos: .utility).async(execute: $0) },
        syncs: SyncThread = .own
    ) throws {
        self.pacer = pacer ?? RequestPacer(settings: .init(maximumPauseSeconds: configuration.policy.maximumBackoffSeconds))
        self.backlog = Backlog(capacity: configuration.queueMemory)
        self.runPass = runPass
        self.recycleTrigger = configuration.recycle
        self.readResidentKiB = residentKiB
        self.spool = spool
        self.transport = transport
        self.clock = clock
        self.configuration = configuration
        self.log = log
        self.idGenerator = ItemIDGenerator(processTag: processTag)
        let events = try events ?? SystemEventSource()
        self.events = events
        self.durability = DurabilityWorker(syncs, wake: { events.wake() })
        self.nextRescan = clock.now().adding(seconds: configuration.rescanSeconds)
    }

    /// Asks the loop to stop: the first request stops new work and lets uploads finish; the
    /// second cancels them and hands their attempts back. Safe from any thread. `drain
    /// --max-time` does the same by itself: it stops at the deadline and cancels after the grace.
    public func requestStop() { events.requestStop() }

    /// A stop handle for signal handlers, usable from any thread.
    public var stopHandle: @Sendable () -> Void {
        let events = self.events
        return { events.requestStop() }
    }

    /// Continues a run an earlier image of this process began (a recycle): its counts go on from
    /// `summary`, `drain --max-time` counts from `startedAt`, and the line it handed on (`line`,
    /// see `handOverLine`) stands in for the start's listing of pending/.
    public func resume(from summary: RunSummary, startedAt: Timestamp, line: RecycleLine? = nil) {
        self.summary = summary
        self.summary.stop = nil
        runStartedAt = startedAt
        handedLine = line
    }

    /// Runs until stopped (or, for `drain`, until nothing is left), then returns what it did: the
    /// production driver, which sleeps in `poll(2)` between steps.
    public func run() throws -> RunSummary {
        try start()
        var now = clock.now()
        while let wake = try step(now: now, events: events.takeEvents()) {
            events.wait(timeoutMilliseconds: Int32(clamping: max(0, wake.millisecondsSinceEpoch - now.millisecondsSinceEpoch)))
            now = clock.now()
        }
        return try finish()
    }

    /// Recovers the spool, watches its folders and scans incoming/ and pending/: before the first step.
    public func start() throws {
        // Counted from the start: recovery of a large spool is part of the time allowed.
        let startedAt = runStartedAt ?? clock.now()
        runDeadline = configuration.maximumRunSeconds.map { startedAt.adding(seconds: $0) }
        try recover()
        incomingWatch = try events.watch(spool.descriptor(.incoming), label: "\(spool.path)/incoming", mask: InotifyWatcher.incomingFolder)
        incomingFolders[incomingWatch] = ""
        rootWatch = try events.watch(spool.root, label: spool.path, mask: InotifyWatcher.created | InotifyWatcher.movedTo)
        // Renames only: every way into pending/ is a rename. A close-write watch would also cost
        // the kernel a walk over every name of pending/ it holds in memory as the watch is set
        // (0.19 s at a million queued, before the first request).
        pendingWatch = try events.watch(spool.descriptor(.pending), label: "\(spool.path)/pending", mask: InotifyWatcher.movedTo)
        try scanIncoming(now: clock.now())
        // The first pass over pending/, watched already: nothing is claimed before it has found
        // the first items in line (the oldest may be anywhere in there), so that much is read
        // here; the runs of the rest are written on the pass's thread.
        try readPendingAtStart(now: clock.now())
        // Items added (by `enqueue`) after recovery and before the watch was set, when memory
        // holds the whole queue (otherwise the passes find them).
        try scanPending(now: clock.now())
        // What recovery and the scans of a large queue allocated for a moment goes back to the
        // kernel; glibc would keep it in the heap for the life of this image.
        ProcessImage.releaseFreeMemory()
        // Said before the first step, and in force for the observers' first look.
        noteUploadWindow(now: clock.now())
        noteLimitRate(now: clock.now())
        observers.engineStarted(self, now: clock.now())
    }

    /// One round at `now`: notes stop requests, records finished uploads, takes inotify events,
    /// ingests, claims due items and commits it all as one group. Returns when the next step is
    /// due (sooner if an event arrives), or nil once the run is over (then call `finish()`).
    public func step(now: Timestamp, events arrived: EngineEvents) throws -> Timestamp? {
        stopLevel = max(stopLevel, arrived.stopLevel)
        noteStop(now: now)
        // Commits whose syncs were made meanwhile go on (a failed sync stops the daemon here).
        try advanceCommits(now: now)
        var round = Round()
        // Before the outcomes: an upload's notes and records were posted before it ended.
        writeNotedOffsets(now: now)
        takeReports(arrived.reports, now: now, into: &round)
        collectFinished(arrived.completions, now: now, into: &round)
        noteRequestRate(now: now)
        noteUploadWindow(now: now)
        noteLimitRate(now: now)
        makeLongDirectUploadsDurable(now: now)
        let stopping = summary.stop != nil
        // A recycle winding down still adopts what is moved into pending/: the items it holds
        // go to the next image in its line (files arriving in incoming/ are found by its scan).
        if round.recordFailure == nil && (!stopping || summary.stop == .recycle) {
            try takeWatcherEvents(arrived.watcher, now: now)
        }
        if !stopping && round.recordFailure == nil {
            try ingest(now: now)
            try collectClaims(now: now, into: &round)
        }
        try commitRound(round, now: now)
        if !stopping && !uploadsHeld { sendDueAborts(now: now) }
        if let failure = round.recordFailure {
            // As for a failed index fsync: no new work, no retry that trusts a second fsync.
            transport.cancelAll()
            throw SpoolError.progressNotRecorded(item: failure.id.description, cause: failure.reason)
        }
        // Spare jsons serve a flow of items; an idle daemon leaves tmp/ empty.
        if isIdle && spool.spareJSONCount > 0 { spool.removeSpareJSONs() }
        if !stopping { noteRecycleDue(now: now) }
        if stopping {
            if uploads.isEmpty && aborts.inFlightCount == 0 && commits.isEmpty && records.isEmpty { return nil }
            if !cancelling, stopLevel > 1 || cancelAt.map({ now >= $0 }) == true {
                log.info(
                    (stopLevel > 1 ? "second stop request" : summary.stop == .recycle ? "recycle grace over" : "--max-time grace over")
                        + ": cancelling \(uploads.count) upload(s); their attempts are handed back")
                cancelling = true
                transport.cancelAll()
            }
        } else if configuration.exitWhenIdle && isIdle {
            return nil
        }
        try compactIndexIfLarge(now: now)
        // A recycle that came due in this step waits like any stop: woken by its grace's end.
        let timeout = observers.timeout(
            self, now: now, milliseconds: summary.stop != nil ? stopPollTimeout(now: now) : pollTimeout(now: now))
        return nextCommitLook(now: now, wake: now.adding(milliseconds: Int64(timeout)))
    }

    /// After the last step: waits for background unlinks, compacts the index, removes the spare
    /// jsons and tells the observers. (The loop ends with no abort in flight, those still owed
    /// stay recorded, and no commit in flight: every sync handed over was made.)
    ///
    /// Every transition of the run is complete then, so the index is cut back to its header: the
    /// next start, a recycled image's included, reads no history and looks for no item it names
    /// (`Spool.inFlightRecoveryScan` looks in three folders at three attempts for each, which
    /// took a recycled image 1.7 s for the 8,000 items uploaded since the last compaction).
    public func finish() throws -> RunSummary {
        if summary.stop == .recycle { lineForNextImage = handOverLine() }
        dropRuns()
        if commits.isEmpty {
            try spool.compactIndex()
        } else {
            try spool.drainRemovals()
        }
        spool.removeSpareJSONs()
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

    /// The resident size the recycle trigger measures growth from (KiB), once noted: handed to
    /// the next image, so the bound holds across recycles.
    public var recycleReferenceKiB: Int? { recycleTrigger.referenceKiB }

    /// A recycle is due once the trigger says so (memory grown past `--recycle-above`, or
    /// `--recycle-after` requests): take no new work, give uploads in flight
    /// `recycleGraceSeconds`, then return `Stop.recycle`.
    func noteRecycleDue(now: Timestamp) {
        guard summary.stop == nil, recycleTrigger.isEnabled,
              let reason = recycleTrigger.check(requests: requestsStarted, readResidentKiB: readResidentKiB)
        else { return }
        summary.stop = .recycle
        recycleReason = reason
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

    /// Nothing pending (in memory or beyond), nothing uploading, nothing being recorded, nothing
    /// waiting in incoming/, no abort in flight (an abort waiting to be sent again does not keep
    /// `drain` going: it stays owed).
    var isIdle: Bool {
        items.isEmpty && uploads.isEmpty && commits.isEmpty && records.isEmpty && incomingAnnounced.isEmpty && incomingSettling.isEmpty
            && aborts.inFlightCount == 0 && backlog.isEmpty
    }

    /// Milliseconds until something is due: the next pending item (or, while requests are
    /// limited, the next token for it), the next probe, the next settle check, the end of a
    /// limit that went unused, the next change of an upload window or the rate timetable, or
    /// the periodic rescan; outside the upload windows, nothing that sends. Never busy-polls: a wake-up "now" is only
    /// for work the next step can do, so a daemon that cannot make progress (the spool full, the
    /// endpoint down or throttling, every item waiting for its retry) sleeps until an event or a
    /// deadline.
    func pollTimeout(now: Timestamp) -> Int32 {
        var wake = nextRescan
        if let settle = nextSettleCheck { wake = min(wake, settle) }
        if let runDeadline { wake = min(wake, runDeadline) }
        // A paused intake's next try (at once after an upload freed space, if files wait);
        // announced files left over by a batch limit are taken in the next round, or, while
        // taken in step with the uploads, when the next upload ends. Files the size gate holds
        // wait for an upload's end or an item leaving the queue (an event, or this round's
        // doing, which `holdsIntake` sees).
        if intake.pausedSince != nil {
            if let next = intake.nextTry { wake = min(wake, next) } else if !incomingAnnounced.isEmpty { wake = now }
        } else if !incomingAnnounced.isEmpty && !intakeFollowsUploads && !(sizeGate?.holdsIntake(self) ?? false) {
            wake = now
        }
        // The first in line in memory, unless a pass must read pending/ before it may go (the
        // pass's end wakes the loop): waking for it meanwhile would spin.
        let next = memoryHead().flatMap { backlog.mayClaim($0) ? $0 : nil }
        if uploadsHeld {
            // Nothing is sent before the next window opens (`nextTimetableRead`).
        } else if endpoint.outage != nil {
            // While a probe is out, its completion wakes us. A probe is an upload of a due item:
            // it waits for the probe time and for the first item's retry time, whichever is later.
            if let probe = endpoint.nextProbe, let next { wake = min(wake, max(probe, next.notBefore)) }
        } else if uploads.count < configuration.concurrency, let next {
            wake = min(wake, max(next.notBefore, pacer.nextStart(now: now)))
        }
        if let durable = nextDirectDurable { wake = min(wake, durable) }
        if let offsets = offsetsDue { wake = min(wake, offsets) }
        if let abort = aborts.nextDue, !uploadsHeld { wake = min(wake, abort) }
        if let read = nextTimetableRead { wake = min(wake, read) }
        if let lift = pacer.liftDue { wake = min(wake, lift) }
        if let rewrite = shownLimit?.rewriteAt { wake = min(wake, rewrite) }
        // A pass that failed is tried again; one under way wakes the loop when it ends.
        if let retry = passRetryAt { wake = min(wake, retry) }
        let ms = wake.millisecondsSinceEpoch - now.millisecondsSinceEpoch
        return Int32(clamping: max(0, min(ms, 60_000)))
    }

    /// Compaction drops records that commits in flight still rely on: it is made at a step with
    /// none in flight, or, once overdue, waits for them (the loop then waits on the disk, as it
    /// does for compaction's own syncs: once per 8 MiB of index at most).
    func compactIndexIfLarge(now: Timestamp) throws {
        guard spool.index.wantsCompaction, commits.isEmpty || spool.index.needsCompaction else { return }
        try waitForCommits(now: now)
        try spool.compactIndex()
    }
}
