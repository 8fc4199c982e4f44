import SpoolCore
import SpoolTransport

/// How the daemon uploads: everything `spoold run` and `drain` take from the command line.
public struct EngineConfiguration: Sendable {
    public var url: URLTemplate
    /// `PUT` (default) or `POST`.
    public var method: String
    /// Uploads at once.
    public var concurrency: Int
    public var policy: RetryPolicy
    /// Move accepted items to done/ instead of deleting them.
    public var keepDone: Bool
    /// A file found by a scan (not announced by inotify) is taken once it is this old and no
    /// process holds it open for writing.
    public var settleSeconds: Double
    /// `drain`: exit once nothing is left to do instead of waiting for more files.
    public var exitWhenIdle: Bool
    /// `drain --max-time`: after this long, take no new work and end (see `stopGraceSeconds`).
    public var maximumRunSeconds: Double?
    /// Headers sent with every request (`--header`); an item's own headers win, except over a
    /// credential (`HeaderFields.request`).
    public var headers: [String: String]
    /// A full rescan of incoming/ and pending/ this often, in case an event was missed.
    public var rescanSeconds: Double
    /// `--max-watches`: most inotify watches on incoming/ and its subfolders. Each takes kernel
    /// memory from the user's `fs.inotify.max_user_watches` budget (as root, every root
    /// process's); files in folders past it are found by the rescan.
    public var maximumWatches = EngineConfiguration.defaultMaximumWatches
    public static let defaultMaximumWatches = 1024
    /// Longest wait between probes while the endpoint is unreachable.
    public var maximumProbeSeconds: Double
    /// `--form FIELD`: send `multipart/form-data` with the blob as file part FIELD.
    public var formField: String?
    /// `--allow-url`: which per-item URLs (sidecar `"url"`) may be used.
    public var allowedURLs: URLAllowList
    /// Secrets from `--header-file` and `--header-env`: sent with every request (they win over an
    /// item's own headers), never stored in a json, the index or the log.
    public var credentialHeaders: [String: String]
    /// The secret values spoold was given (`credentialHeaders`, credential headers among
    /// `headers`, the S3 secret key and session token): redacted from every answer excerpt and
    /// error text before it is stored or logged. An item's own credential headers are added
    /// per item.
    public var secrets = SecretRedaction()
    /// `--retry-on`, `--final-on`: how the endpoint's answers are classed beyond the defaults.
    public var outcomeRules: OutcomeRules
    /// `--content-digest sha-256`: an RFC 9530 `Content-Digest` header over the body sent.
    public var contentDigest: ContentDigest?
    /// `--compress gzip`: items are sent in this coding, except those `CompressionRule` leaves
    /// as they are.
    public var compression: ContentCoding?
    /// `--recycle-above`, `--recycle-after`: when the loop winds down with `Stop.recycle`, so the
    /// daemon can re-execute itself and give back what URLSession keeps.
    public var recycle: RecycleTrigger
    /// How long uploads in flight may go on once a recycle is due before they are cancelled and
    /// their attempts handed back.
    public var recycleGraceSeconds: Double
    /// With an s3:// URL, `--s3-part-size`: larger items go up as multipart uploads, their
    /// progress kept in a part log (`SPOOL/parts/`). Nil otherwise.
    public var multipartThreshold: Int64?
    /// With a tus+ URL: every item is a tus upload to the endpoint (`url`, which appends no name),
    /// its upload URL kept in a part log (`SPOOL/parts/`).
    public var tusUploads = false
    /// With an s3:// URL, which of an item's own headers it may send (`--s3-allow-header`); nil
    /// for an HTTP URL, where any valid header may be sent.
    public var s3ItemHeaders: S3ItemHeaderRule?
    /// Send a file announced in incoming/ straight away while the endpoint answers and no queued
    /// item is due, instead of first making it a durable item (`Spool.takeForDirectUpload`); off
    /// with `--no-direct`, and never with `keepDone`.
    public var directUploads = true
    /// A direct multipart upload still under way this long after it began has its blob synced,
    /// and from then on its part records (`Spool.makeDirectUploadDurable`): until then a power
    /// cut can cost its progress, never a record ahead of its bytes. The kernel's own writeback
    /// of dirty data starts after 30 s (`vm.dirty_expire_centisecs`): an upload that ends sooner
    /// never writes its blob to the disk at all.
    public var directDurableSeconds: Double = 30
    /// `--queue-memory`: most items held in memory (pending and in flight); the rest of the queue
    /// waits in pending/ and is read in line order when its turn comes (`Backlog`).
    public var queueMemory = EngineConfiguration.defaultQueueMemory
    public static let defaultQueueMemory = 10_000
    /// `--upload-window`: uploads are sent only inside these windows; outside them they are held
    /// (files are still taken in). Nil: always.
    public var uploadWindows: UploadWindows?
    /// `--window-cuts`: a window that closes cancels the uploads in flight and hands their
    /// attempts back; without it they finish.
    public var windowCuts = false
    /// `--limit-rate` as given: the transport enforces it (`SendRate`); the engine says when the
    /// rate changes and what it is (log, metrics). Nil: no limit.
    public var limitRate: RateTimetable?
    /// The zone the timetables are read in: the machine's, or a test's rule.
    public var zone = LocalZone.system

    /// How long uploads in flight may go on once `maximumRunSeconds` is reached before they are
    /// cancelled and their attempts handed back: 10 s, or `maximumRunSeconds` if that is shorter,
    /// so a short bound stays short.
    public var stopGraceSeconds: Double? { maximumRunSeconds.map { min(10, $0) } }

    /// The defaults of `--method`, `--concurrency` and `--settle`, here alone.
    public static let defaultMethod = "PUT"
    public static let defaultConcurrency = 4
    public static let defaultSettleSeconds = 2.0

    public init(
        url: URLTemplate, method: String = EngineConfiguration.defaultMethod, concurrency: Int = EngineConfiguration.defaultConcurrency,
        policy: RetryPolicy = RetryPolicy(), keepDone: Bool = false, settleSeconds: Double = EngineConfiguration.defaultSettleSeconds,
        exitWhenIdle: Bool = false, headers: [String: String] = [:],
        rescanSeconds: Double = 60, maximumProbeSeconds: Double = 60, formField: String? = nil,
        allowedURLs: URLAllowList = URLAllowList([]), credentialHeaders: [String: String] = [:],
        maximumRunSeconds: Double? = nil, outcomeRules: OutcomeRules = OutcomeRules(), contentDigest: ContentDigest? = nil,
        recycle: RecycleTrigger = RecycleTrigger(maximumRequests: 0, growthLimitKiB: 0), recycleGraceSeconds: Double = 30
    ) {
        (self.url, self.method, self.concurrency, self.policy) = (url, method, concurrency, policy)
        (self.keepDone, self.settleSeconds, self.exitWhenIdle, self.headers) = (keepDone, settleSeconds, exitWhenIdle, headers)
        (self.rescanSeconds, self.maximumProbeSeconds) = (rescanSeconds, maximumProbeSeconds)
        (self.formField, self.allowedURLs, self.credentialHeaders) = (formField, allowedURLs, credentialHeaders)
        self.maximumRunSeconds = maximumRunSeconds
        (self.outcomeRules, self.contentDigest) = (outcomeRules, contentDigest)
        (self.recycle, self.recycleGraceSeconds) = (recycle, recycleGraceSeconds)
    }
}
