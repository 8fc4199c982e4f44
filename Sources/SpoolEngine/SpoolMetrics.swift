import SpoolCore
import SpoolStore
import SpoolSystem

/// `--metrics-file`: the daemon's counters and the spool's gauges in Prometheus text format,
/// rewritten atomically every `refreshSeconds` and at exit (node_exporter's textfile collector).
///
/// Gauges come from the engine's own memory where it has them: the queue (pending and in
/// flight) is the engine's item table, its bytes a running sum (`QueueBytes`), so a refresh
/// does not rescan pending/. failed/ and incoming/ are
/// listed again only when their directory's mtime moved (operators and producers change them).
public final class SpoolMetrics: EngineObserver {
    /// node_exporter reads textfiles on each scrape (often every 15 s): refresh a bit faster.
    public static let refreshSeconds = 10.0
    /// Seconds: a fast small PUT up to the default 300 s deadline.
    public static let durationBounds: [Double] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

    private let spool: Spool
    private let file: AtomicTextFile
    private let log: EventLog
    private var nextRefresh: Timestamp?
    private var writeFailed = false

    /// Payload bytes of the engine's queue (pending or in flight), shared with the size limit.
    private let queue: QueueBytes
    private var uploads: [UploadOutcome.Class: Int] = [:]
    private var uploadedBytes: Int64 = 0
    private var durations = PrometheusText.Histogram(upperBounds: SpoolMetrics.durationBounds)
    private var dropped = 0
    private var resumes = 0
    private var startOvers: [MultipartNote.StartOver.Reason: Int] = [:]
    private var discardedBytes: Int64 = 0
    private var completionChecks: [String: Int] = [:]
    private var abortResults: [String: Int] = [:]
    private var failedFolder = FolderTotals(.failed)
    private var incomingFolder = FolderTotals(.incoming)

    /// `queue` must be an observer of the same engine, added before this one.
    public init(spool: Spool, queue: QueueBytes, path: String, log: EventLog) {
        self.spool = spool
        self.queue = queue
        self.file = AtomicTextFile(path: path)
        self.log = log
    }

    // MARK: events

    public func engineStarted(_ engine: Engine, now: Timestamp) { write(engine, now: now) }

    public func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp? {
        if let due = nextRefresh, now < due { return due }
        write(engine, now: now)
        return nextRefresh
    }

    public func engineFinished(_ engine: Engine, now: Timestamp) { write(engine, now: now) }

    public func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
        let outcomeClass = outcome.class
        uploads[outcomeClass, default: 0] += 1
        if outcomeClass == .success { uploadedBytes += size }
        durations.observe(max(0, seconds))
    }

    public func itemDropped(_ id: ItemID) { dropped += 1 }

    public func multipartNoted(_ id: ItemID, _ note: MultipartNote) {
        switch note {
        case .resumed, .tusResumed: resumes += 1
        case .startedOver(let over):
            startOvers[over.reason, default: 0] += 1
            discardedBytes += over.discardedBytes
        case .completionChecked(let check): completionChecks[check.decisionLabel, default: 0] += 1
        case .abortOwed: break
        }
    }

    public func abortEnded(_ abort: OwedAbort, _ result: AbortSchedule.Result) {
        switch result {
        case .confirmed: abortResults["confirmed", default: 0] += 1
        case .retry: abortResults["failed", default: 0] += 1
        case .held: abortResults["refused", default: 0] += 1
        case .unknown: break
        }
    }

    // MARK: output

    /// The exposition as of `now`.
    func render(_ engine: Engine, now: Timestamp) -> String {
        queue.reconcile(engine)
        let queuedBytes = queue.total
        failedFolder.refresh(spool, now: now)
        incomingFolder.refresh(spool, now: now)
        let inflightBytes = engine.uploads.values.reduce(Int64(0)) { $0 + $1.metadata.size }
        let inflight = engine.uploads.count
        // The oldest pending item: in memory, or the next one waiting beyond it.
        var oldest = engine.backlog.nextToLoad?.id
        for (id, lifecycle) in engine.items where lifecycle.state == .pending {
            if oldest.map({ id < $0 }) ?? true { oldest = id }
        }
        let oldestAge = oldest.flatMap(\.createdAt).map { max(0, $0.seconds(until: now)) } ?? 0

        var text = PrometheusText()
        func byState(_ values: [(String, Double)]) -> [(labels: [(String, String)], value: Double)] {
            values.map { ([("state", $0.0)], $0.1) }
        }
        text.gauge("spoold_queue_items", "Items in the spool by state (incoming: files not yet taken).", byState([
            ("incoming", Double(incomingFolder.count)), ("pending", Double(engine.pendingCount)),
            ("inflight", Double(inflight)), ("failed", Double(failedFolder.count)),
        ]))
        text.gauge("spoold_queue_bytes", "Payload bytes in the spool by state.", byState([
            ("incoming", Double(incomingFolder.bytes)), ("pending", Double(max(0, queuedBytes - inflightBytes))),
            ("inflight", Double(inflightBytes)), ("failed", Double(failedFolder.bytes)),
        ]))
        text.gauge("spoold_oldest_pending_age_seconds", "Age of the oldest pending item (0 when none).", oldestAge)
        text.counter("spoold_uploads_total", "Upload attempts finished since start, by outcome.",
                     UploadOutcome.Class.allCases.map { ([("outcome", $0.rawValue)], Double(uploads[$0] ?? 0)) })
        text.counter("spoold_uploaded_bytes_total", "Payload bytes accepted by the endpoint since start.", Double(uploadedBytes))
        text.histogram("spoold_upload_duration_seconds", "Duration of upload attempts, any outcome.", durations)
        text.gauge("spoold_endpoint_up", "1 while the endpoint answers, 0 during an outage (unreachable, or refusing every upload).", engine.outage == nil ? 1 : 0)
        text.counter("spoold_dropped_total", "Pending items deleted to make room (--when-full drop-oldest) since start.", Double(dropped))
        text.counter("spoold_multipart_resumes_total", "S3 multipart and tus uploads taken up again from their part logs since start.", Double(resumes))
        text.counter("spoold_multipart_start_overs_total", "S3 multipart and tus uploads begun anew, what the server held thrown away, since start, by reason.",
                     MultipartNote.StartOver.Reason.allCases.map { ([("reason", $0.rawValue)], Double(startOvers[$0] ?? 0)) })
        text.counter("spoold_multipart_discarded_bytes_total", "Bytes the store or tus server had accepted, thrown away by start-overs since start.",
                     Double(discardedBytes))
        text.counter("spoold_multipart_completion_checks_total", "Completions in doubt checked with the store since start, by decision.",
                     ["completed", "start_over", "unknown"].map { ([("decision", $0)], Double(completionChecks[$0] ?? 0)) })
        text.counter("spoold_multipart_aborts_total", "AbortMultipartUpload requests answered since start, by result.",
                     ["confirmed", "failed", "refused"].map { ([("result", $0)], Double(abortResults[$0] ?? 0)) })
        text.gauge("spoold_multipart_aborts_owed", "AbortMultipartUpload requests owed to the store (SPOOL/parts/aborts.log).",
                   Double(engine.aborts.owedCount))
        let rate = engine.pacer.current(now: now)
        text.gauge("spoold_throttled", "1 while the endpoint throttles and requests are limited, else 0.", rate.limit == nil ? 0 : 1)
        text.gauge("spoold_request_rate_limit", "Requests per second allowed while the endpoint throttles (0: no limit).", rate.limit?.rate ?? 0)
        text.counter(
            "spoold_throttled_answers_total", "Answers that asked for fewer requests since start (multipart steps included).",
            Double(rate.throttledAnswers))
        text.gauge(
            "spoold_upload_window_open", "1 while uploads may be sent (inside an --upload-window window, or none given), 0 while held outside.",
            engine.uploadsHeld ? 0 : 1)
        text.gauge(
            "spoold_uploads_paused_until_timestamp_seconds", "While uploads are held outside the upload windows: when the next opens (Unix time), else 0.",
            engine.uploadsHeldUntil?.secondsSinceEpoch ?? 0)
        text.gauge(
            "spoold_limit_rate_bytes_per_second", "The --limit-rate in force (its timetable's rate now), 0: no limit.",
            Double(engine.limitRateInForce(now: now) ?? 0))
        return text.text
    }

    private func write(_ engine: Engine, now: Timestamp) {
        nextRefresh = now.adding(seconds: SpoolMetrics.refreshSeconds)
        do {
            try file.replace(with: render(engine, now: now))
            if writeFailed { log.info("metrics file \(file.path) written again") }
            writeFailed = false
        } catch {
            // Metrics are advisory: say so once and keep uploading.
            if !writeFailed { log.warning("cannot write metrics file \(file.path): \(error); retrying every \(Int(SpoolMetrics.refreshSeconds)) s") }
            writeFailed = true
        }
    }

    /// Items and bytes in a folder the engine does not track, listed again only when the
    /// folder's mtime moved (or was recent enough for a change in the same millisecond).
    private struct FolderTotals {
        let folder: SpoolFolder
        var count = 0
        var bytes: Int64 = 0
        var seenModified: Int64?

        init(_ folder: SpoolFolder) { self.folder = folder }

        mutating func refresh(_ spool: Spool, now: Timestamp) {
            guard let modified = try? spool.status(of: folder).modifiedMilliseconds else { return }
            if let seen = seenModified, seen == modified, now.millisecondsSinceEpoch - modified > 2000 { return }
            seenModified = modified
            guard let entries = try? spool.list(folder) else { return }
            (count, bytes) = (0, 0)
            for entry in entries {
                if folder == .incoming {
                    guard !entry.name.hasPrefix("."), !entry.name.hasSuffix(SpoolFolder.sidecarSuffix),
                          let status = try? spool.status(of: entry.name, in: folder), status.type == .regular else { continue }
                    count += 1
                    bytes += status.size
                } else if let name = ItemFileName(parsing: entry.name) {
                    if name.kind == .json { count += 1 }
                    else if let status = try? spool.status(of: entry.name, in: folder) { bytes += status.size }
                }
            }
        }
    }
}
