/// One attempt of one item's tus 1.0 upload (tus.io "Resumable upload protocol" 1.0.0, with the
/// `creation`, `creation-with-upload`, `checksum` and `termination` extensions), as a state
/// machine: each request is one HTTP attempt a transport drives (`TusTransport`), and the driver
/// reports its outcome (`answered`) and does what the returned `Action` says. Pure: nothing here
/// does I/O.
///
/// - The server's capabilities come from OPTIONS, asked once per daemon start and endpoint
///   (`TusCapabilities`; a 4xx means none are said: `creation` is assumed).
/// - No recorded upload: POST creates one (`Upload-Length`, `Upload-Metadata`), with the first
///   chunk as its body when the server offers `creation-with-upload`. The `Location` it answers
///   is resolved against the endpoint and checked (`uploadURLProblem`: the server is untrusted),
///   then recorded durably (`recordUploadURL`) before anything is sent to it.
/// - A recorded upload: HEAD asks the server how far it got (`Upload-Offset`), and the upload
///   goes on from there. A 404 or 410 means the server no longer has it: the upload starts over
///   (`startOver`, once per attempt), with what the server had held thrown away.
/// - PATCH sends at most `chunkSize` bytes from the server's offset, each with its
///   `Upload-Checksum` when the server offers the `checksum` extension; the server's
///   `Upload-Offset` says where the next goes. A conflict (409: the offset is not the server's),
///   a checksum mismatch (460) or a PATCH without an answer (the connection dropped) is followed
///   by a HEAD that says where to go on, up to `maximumResyncs` times per attempt.
/// - The upload is done when the server holds every byte (`Upload-Offset` equals the length).
public struct TusUpload: Sendable {
    public struct Settings: Equatable, Sendable {
        /// The creation URL (`--url` without `tus+`), absolute.
        public var endpoint: String
        /// The blob's size.
        public var length: Int64
        /// Most bytes one request carries (`--tus-chunk-size`).
        public var chunkSize: Int64
        /// Hosts an upload URL may be on besides the endpoint's origin (`--allow-redirect-host`).
        public var allowedHosts: Set<String>

        public init(endpoint: String, length: Int64, chunkSize: Int64, allowedHosts: Set<String> = []) {
            (self.endpoint, self.length, self.chunkSize) = (endpoint, length, max(1, chunkSize))
            self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
        }
    }

    /// What the driver does next.
    public enum Action: Equatable, Sendable {
        /// Nothing: an event that does not fit the state (reported twice, or after the end).
        case none
        /// Ask the endpoint (OPTIONS) what it offers; report the outcome.
        case options
        /// Create an upload (POST to the endpoint); with `bodyLength` > 0 the blob's first bytes
        /// go with it (`creation-with-upload`), with their checksum when one is named.
        case create(bodyLength: Int64, checksum: TusChecksum?)
        /// Record the upload durably; report `recorded()` (or end the attempt if it cannot be).
        case recordUploadURL(TusUploadRecord)
        /// Ask the upload URL (HEAD) how many bytes the server holds.
        case head(url: String)
        /// Send `length` bytes of the blob from `offset` (PATCH), with their checksum when one is named.
        case patch(url: String, offset: Int64, length: Int64, checksum: TusChecksum?)
        /// Forget the recorded upload (its log), first owing its termination when it may still
        /// exist (`StartOver.stillExists`); say so; report `startedOver()`.
        case startOver(StartOver)
        /// The server holds every byte: the item is uploaded, with this answer.
        case done(HTTPAnswer)
        /// The attempt ends with this outcome; the recorded upload (if any) is kept for the next.
        case fail(UploadOutcome)
    }

    /// Why an upload is begun anew, and what that throws away.
    public struct StartOver: Equatable, Sendable {
        public var reason: MultipartNote.StartOver.Reason
        /// What the server answered, in words for the log.
        public var detail: String
        public var old: TusUploadRecord
        /// Bytes the server was last known to hold (its last `Upload-Offset`, or the log's): sent for nothing.
        public var discardedBytes: Int64
        /// Whether the old upload may still be on the server (its termination is then owed).
        public var stillExists: Bool

        public init(reason: MultipartNote.StartOver.Reason, detail: String, old: TusUploadRecord, discardedBytes: Int64, stillExists: Bool) {
            (self.reason, self.detail, self.old, self.discardedBytes, self.stillExists) = (reason, detail, old, discardedBytes, stillExists)
        }

        /// What the daemon is told.
        public var note: MultipartNote {
            .startedOver(.init(
                reason: reason, detail: detail, oldUploadID: old.uploadURL, discardedParts: 0, discardedBytes: discardedBytes, isTus: true))
        }

        /// What the item's part log records of it (`PartRecord.startOver`).
        public var record: StartOverRecord { StartOverRecord(owing: stillExists ? .tus(old) : nil, note: note) }
    }

    /// Resyncs (a HEAD after a conflict, a checksum mismatch or a PATCH without an answer) per attempt.
    public static let maximumResyncs = 3

    private enum State: Equatable {
        case idle
        case probing
        case creating(body: Int64)
        case recording(TusUploadRecord, offset: Int64)
        case heading(url: String, resync: Bool)
        case patching(url: String, offset: Int64, length: Int64)
        case startingOver
        case finished
    }

    public let settings: Settings
    /// What the server offers: given (known from an earlier attempt), or learned by this one's OPTIONS.
    public private(set) var capabilities: TusCapabilities?
    /// The upload this attempt works on (recorded, or about to be).
    public private(set) var upload: TusUploadRecord?
    /// The most bytes the server is known to hold: its last `Upload-Offset`, else the log's.
    public private(set) var knownOffset: Int64
    /// The offset a recorded upload was taken up at (its first HEAD's answer), or nil.
    public private(set) var resumedAt: Int64?
    private var state = State.idle
    private var resyncsLeft = TusUpload.maximumResyncs
    private var startOvers = StartOverBudget()
    /// The status OPTIONS answered in this attempt, for an outcome that comes of what it said.
    private var optionsStatus: Int?

    /// - Parameters:
    ///   - capabilities: what the endpoint offers, if known; nil: ask first.
    ///   - recorded: the upload the item's log records, with the last offset it noted.
    public init(_ settings: Settings, capabilities: TusCapabilities?, recorded: (record: TusUploadRecord, offset: Int64)?) {
        self.settings = settings
        self.capabilities = capabilities
        upload = recorded?.record
        knownOffset = recorded?.offset ?? 0
    }

    public var isFinished: Bool { state == .finished }

    // MARK: Events

    /// The attempt begins.
    public mutating func start() -> Action {
        guard state == .idle else { preconditionFailure("a tus upload starts once") }
        guard HTTPOrigin(settings.endpoint) != nil else {
            return fail(.refusal(.urlRefused, "invalid tus endpoint '\(settings.endpoint)'"))
        }
        guard capabilities != nil else {
            state = .probing
            return .options
        }
        return proceed()
    }

    /// The request the last action sent ended with `outcome` (the server's throttling already
    /// waited out by the driver).
    public mutating func answered(_ outcome: UploadOutcome) -> Action {
        switch state {
        case .probing: return probed(outcome)
        case .creating(let body): return created(outcome, body: body)
        case .heading(let url, let resync): return headed(outcome, url: url, resync: resync)
        case .patching(let url, let offset, let length): return patched(outcome, url: url, offset: offset, length: length)
        case .idle, .recording, .startingOver, .finished: return .none
        }
    }

    /// The upload URL is durable: the bytes may go.
    public mutating func recorded() -> Action {
        guard case .recording(let record, let offset) = state else { return .none }
        return patch(record.uploadURL, from: offset)
    }

    /// The old upload is forgotten (and its termination owed when it may still exist).
    public mutating func startedOver() -> Action {
        guard state == .startingOver else { return .none }
        upload = nil
        knownOffset = 0
        return create()
    }

    // MARK: Steps

    private mutating func probed(_ outcome: UploadOutcome) -> Action {
        guard case .answered(let answer) = outcome else { return fail(outcome) }
        optionsStatus = answer.status
        guard let offered = TusCapabilities.offered(answering: answer) else { return fail(outcome) }
        capabilities = offered
        return proceed()
    }

    /// Capabilities known: take up the recorded upload, or create one.
    private mutating func proceed() -> Action {
        let capabilities = capabilities!
        guard capabilities.speaksVersion else {
            return fail(configuration("the tus server speaks version \(capabilities.versions.joined(separator: ", ")), not \(TusCapabilities.version)"))
        }
        if let maximum = capabilities.maximumSize, settings.length > maximum {
            return fail(.refusal(.serverRefused, "\(settings.length) B is more than the tus server takes (Tus-Max-Size: \(maximum))"))
        }
        guard let upload else { return create() }
        if let problem = TusUpload.uploadURLProblem(upload.uploadURL, endpoint: settings.endpoint, allowedHosts: settings.allowedHosts) {
            // Never sent a request (and so no termination either): the log is not to be trusted.
            return startOver(.objectChanged, "its log names an upload URL spoold does not send to (\(problem))", stillExists: false, after: nil)
        }
        guard upload.endpoint == settings.endpoint, upload.size == settings.length else {
            return startOver(
                .objectChanged, "its log was written for another upload (\(upload.size) B at \(upload.endpoint))", stillExists: true,
                after: nil)
        }
        state = .heading(url: upload.uploadURL, resync: false)
        return .head(url: upload.uploadURL)
    }

    private mutating func create() -> Action {
        let capabilities = capabilities!
        guard capabilities.creation else {
            return fail(configuration("the tus server does not offer the creation extension (Tus-Extension: \(capabilities.extensions.sorted().joined(separator: ",")))"))
        }
        let body = capabilities.creationWithUpload ? min(settings.chunkSize, settings.length) : 0
        state = .creating(body: body)
        return .create(bodyLength: body, checksum: body > 0 ? capabilities.checksum : nil)
    }

    private mutating func created(_ outcome: UploadOutcome, body: Int64) -> Action {
        guard case .answered(let answer) = outcome, (200..<300).contains(answer.status) else { return fail(outcome) }
        if settings.length == 0 { return done(answer) }
        guard let location = answer.location, !location.isEmpty else {
            return fail(.answered(answer.ruled(.retryable, because: "the tus creation answered \(answer.status) without a Location")))
        }
        guard let url = URLReference.resolve(location, against: settings.endpoint), HTTPOrigin(url) != nil else {
            return fail(.answered(answer.ruled(.retryable, because: "the tus creation answered a Location that is not an http(s) URL")))
        }
        if let problem = TusUpload.uploadURLProblem(url, endpoint: settings.endpoint, allowedHosts: settings.allowedHosts) {
            return fail(.refusal(.urlRefused, "the tus server named an upload URL spoold does not send to: \(problem)", status: answer.status))
        }
        var offset: Int64 = 0
        if body > 0, answer.tus?[.uploadOffset] != nil {
            guard let taken = answer.tus?.bytes(.uploadOffset), taken <= body else {
                return fail(.answered(answer.ruled(
                    .retryable, because: "the tus creation answered Upload-Offset '\(answer.tus?[.uploadOffset] ?? "")' for \(body) B sent")))
            }
            offset = taken
        }
        knownOffset = offset
        if offset == settings.length { return done(answer) }
        let record = TusUploadRecord(size: settings.length, uploadURL: url, endpoint: settings.endpoint)
        upload = record
        state = .recording(record, offset: offset)
        return .recordUploadURL(record)
    }

    private mutating func headed(_ outcome: UploadOutcome, url: String, resync: Bool) -> Action {
        guard case .answered(let answer) = outcome else { return fail(outcome) }
        if answer.status == 404 || answer.status == 410 {
            return startOver(.uploadGone, "HEAD of its upload URL answered \(answer.status)", stillExists: false, after: outcome)
        }
        guard (200..<300).contains(answer.status) else { return fail(outcome) }
        guard let offset = answer.tus?.bytes(.uploadOffset) else {
            return fail(.answered(answer.ruled(.retryable, because: "HEAD of the tus upload answered without a valid Upload-Offset")))
        }
        if let length = answer.tus?.bytes(.uploadLength), length != settings.length {
            return startOver(.objectChanged, "the server's upload is \(length) B long, the item \(settings.length) B", stillExists: true, after: outcome)
        }
        guard offset <= settings.length else {
            return startOver(.objectChanged, "the server's upload holds \(offset) B of \(settings.length)", stillExists: true, after: outcome)
        }
        knownOffset = offset
        if !resync { resumedAt = offset }
        if offset == settings.length { return done(answer) }
        return patch(url, from: offset)
    }

    private mutating func patched(_ outcome: UploadOutcome, url: String, offset: Int64, length: Int64) -> Action {
        switch outcome {
        case .answered(let answer) where (200..<300).contains(answer.status):
            guard let next = answer.tus?.bytes(.uploadOffset), next > offset, next <= offset + length else {
                return fail(.answered(answer.ruled(
                    .retryable,
                    because: "the tus PATCH of \(length) B at \(offset) answered Upload-Offset '\(answer.tus?[.uploadOffset] ?? "")'")))
            }
            knownOffset = next
            if next == settings.length { return done(answer) }
            return patch(url, from: next)
        case .answered(let answer) where answer.status == 404 || answer.status == 410:
            return startOver(.uploadGone, "a PATCH to its upload URL answered \(answer.status)", stillExists: false, after: outcome)
        case .answered(let answer) where answer.status == 409 || answer.status == 460:
            return resync(url, after: outcome)
        case .failed:
            return resync(url, after: outcome)
        case .answered, .refused, .cancelled:
            return fail(outcome)
        }
    }

    /// A HEAD says where the upload goes on, while resyncs are left; else `outcome` ends the attempt.
    private mutating func resync(_ url: String, after outcome: UploadOutcome) -> Action {
        guard resyncsLeft > 0 else { return fail(outcome) }
        resyncsLeft -= 1
        state = .heading(url: url, resync: true)
        return .head(url: url)
    }

    private mutating func patch(_ url: String, from offset: Int64) -> Action {
        let length = min(settings.chunkSize, settings.length - offset)
        state = .patching(url: url, offset: offset, length: length)
        return .patch(url: url, offset: offset, length: length, checksum: capabilities?.checksum)
    }

    /// Begins anew, once per attempt; a second time, `after` (or a retryable failure) ends it.
    private mutating func startOver(
        _ reason: MultipartNote.StartOver.Reason, _ detail: String, stillExists: Bool, after outcome: UploadOutcome?
    ) -> Action {
        guard let old = upload else { return fail(outcome ?? .refusal(.unsupported, detail)) }
        if let ending = startOvers.spend(after: outcome, detail: detail) { return fail(ending) }
        state = .startingOver
        return .startOver(StartOver(reason: reason, detail: detail, old: old, discardedBytes: knownOffset, stillExists: stillExists))
    }

    private mutating func done(_ answer: HTTPAnswer) -> Action {
        state = .finished
        return .done(answer)
    }

    private mutating func fail(_ outcome: UploadOutcome) -> Action {
        state = .finished
        return .fail(outcome)
    }

    /// What the server offers rules out every upload: a problem of the daemon's configuration
    /// (paused and probed like an outage, no attempt counted), as the answer to OPTIONS said it.
    private func configuration(_ why: String) -> UploadOutcome {
        .answered(HTTPAnswer(status: optionsStatus ?? 204).ruled(.configuration, because: why))
    }

    // MARK: Rules

    /// Why spoold does not send to `url`, an upload URL a tus server named (untrusted): not an
    /// absolute http(s) URL, another origin (scheme, host, port) than `endpoint`'s unless its host
    /// is among `allowedHosts`, or https down to http. Nil when it may.
    public static func uploadURLProblem(_ url: String, endpoint: String, allowedHosts: Set<String>) -> String? {
        guard let target = HTTPOrigin(url) else { return "'\(url)' is not an http(s) URL" }
        guard let origin = HTTPOrigin(endpoint) else { return "the endpoint '\(endpoint)' is not an http(s) URL" }
        if origin.scheme == "https" && target.scheme == "http" { return "\(target) leaves https" }
        if target == origin || allowedHosts.contains(target.host) { return nil }
        return "\(target) is another origin than the endpoint's (\(origin)); allow it with --allow-redirect-host \(target.host)"
    }
}

