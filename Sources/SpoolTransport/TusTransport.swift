import Dispatch
import SpoolCore
import Synchronization

/// Uploads to a tus 1.0 server (`--url tus+https://host/files/`): each item is a tus upload
/// (`TusUpload`, the protocol as a pure state machine), each of its requests one HTTP attempt the
/// transport underneath drives (URLSession or libcurl). A layer, like `S3SigningTransport`, not a
/// third transport.
///
/// - What the server offers (OPTIONS) is asked once per daemon start and endpoint, and kept: items
///   that start while the question is out wait for its answer instead of asking again. An
///   attempt that fails forgets it, so the next one asks again.
/// - Each item's attempt runs on `work`, one serial queue (`TusUploadAttempt`); its requests take
///   a token of the daemon's request rate after the first (`RequestPacer`) and a throttled answer
///   is waited out and sent again, as an S3 multipart upload's steps are.
/// - Terminations owed (`abortUpload`): DELETE of the upload URL when the endpoint offers
///   `termination`; when it does not, nothing is sent and the debt is paid (the server's own
///   expiry removes the upload).
public final class TusTransport: UploadTransport, @unchecked Sendable {
    public struct Settings: Sendable {
        /// Most bytes one request carries (`--tus-chunk-size`).
        public var chunkSize: Int64
        /// Hosts an upload URL may be on besides the endpoint's origin (`--allow-redirect-host`).
        public var allowedHosts: Set<String>
        /// Headers for the requests that belong to no item (OPTIONS and DELETE of a termination
        /// owed): the operator's (`--header`, `--header-file`, `--header-env`).
        public var headers: [String: String]
        /// The deadline of a termination's requests.
        public var terminationDeadlineSeconds: Double

        public init(chunkSize: Int64, allowedHosts: Set<String> = [], headers: [String: String] = [:], terminationDeadlineSeconds: Double = 30) {
            (self.chunkSize, self.allowedHosts, self.headers) = (chunkSize, Set(allowedHosts.map { $0.lowercased() }), headers)
            self.terminationDeadlineSeconds = terminationDeadlineSeconds
        }
    }

    /// The default `--tus-chunk-size`: a kill -9 or a dropped connection costs at most this much
    /// sent again, on a server that keeps only whole PATCH bodies.
    public static let defaultChunkSize: Int64 = 16 << 20

    let inner: any UploadTransport
    let settings: Settings
    let clock: any Clock
    let pacer: RequestPacer?
    /// Where every attempt's steps run, one at a time.
    let work = DispatchQueue(label: "spoold.transport.tus")
    /// Told what an endpoint offers each time OPTIONS is answered (for the log); on `work`.
    private let learned: (@Sendable (_ endpoint: String, TusCapabilities) -> Void)?

    // Only touched on `work`.
    private var capabilities: [String: TusCapabilities] = [:]
    /// OPTIONS in flight, by endpoint: who waits for its answer.
    private var probes: [String: [(UploadOutcome) -> Void]] = [:]
    private var attempts: [Int: TusUploadAttempt] = [:]
    private var nextKey = 0

    /// - Parameter learned: told what an endpoint offers each time it answers OPTIONS.
    public init(
        wrapping inner: any UploadTransport, settings: Settings, clock: any Clock, pacer: RequestPacer? = nil,
        learned: (@Sendable (_ endpoint: String, TusCapabilities) -> Void)? = nil
    ) {
        (self.inner, self.settings, self.clock, self.pacer, self.learned) = (inner, settings, clock, pacer, learned)
    }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        if let problem = request.headerProblem {
            request.release()
            completion(UploadRequest.refusedHeaders(problem))
            return
        }
        work.async { [self] in
            nextKey += 1
            let key = nextKey
            let attempt = TusUploadAttempt(request, owner: self, key: key) { [self] outcome in
                attempts[key] = nil
                completion(outcome)
            }
            attempts[key] = attempt
            attempt.start()
        }
    }

    public func cancelAll() {
        work.async { [self] in for attempt in attempts.values { attempt.cancel() } }
        inner.cancelAll()
    }

    public func shutdown() { inner.shutdown() }

    // MARK: What endpoints offer (on `work`)

    /// What `endpoint` is known to offer, or nil (not asked yet, or forgotten).
    func known(_ endpoint: String) -> TusCapabilities? { capabilities[endpoint] }

    /// Keeps what `endpoint` offers for later attempts.
    func remember(_ found: TusCapabilities, for endpoint: String) { capabilities[endpoint] = found }

    /// An attempt failed: the next one asks the endpoint again.
    func forget(_ endpoint: String) { capabilities[endpoint] = nil }

    /// Asks `endpoint` what it offers (OPTIONS, with `headers`, for item `id`), or waits for the
    /// question already out; `then` gets the answer (on `work`).
    func probe(
        _ endpoint: String, for id: ItemID, headers: [String: String], deadlineSeconds: Double?, then: @escaping (UploadOutcome) -> Void
    ) {
        if probes[endpoint] != nil {
            probes[endpoint]!.append(then)
            return
        }
        probes[endpoint] = [then]
        step(
            id: id, attempt: 0, method: "OPTIONS", url: endpoint, body: BlobBody.none, payload: .none,
            headers: TusRequestHeaders.merged(own: headers, tus: [:]), deadlineSeconds: deadlineSeconds, cancellation: nil
        ) { [self] outcome in
            if case .answered(let answer) = outcome, (200..<300).contains(answer.status) {
                learned?(endpoint, TusCapabilities(answer: answer.tus))
            }
            for waiter in probes.removeValue(forKey: endpoint) ?? [] { waiter(outcome) }
        }
    }

    /// Sends one request of the protocol through the transport underneath; `then` gets its
    /// outcome on `work`. The blob is shared, never closed here; no redirect is followed (a 3xx
    /// is the outcome); the answer's excerpt alone is kept.
    func step(
        id: ItemID, attempt: Int, method: String, url: String, body: BlobBody, payload: UploadRequest.Payload,
        headers: [String: String], deadlineSeconds: Double?, cancellation: RequestCancellation?,
        then: @escaping (UploadOutcome) -> Void
    ) {
        var request = UploadRequest(
            id: id, attempt: attempt, url: url, method: method, body: body, contentType: TusRequestHeaders.contentType, headers: headers)
        request.payload = payload
        request.ownsBody = false
        request.followsRedirects = false
        request.deadlineSeconds = deadlineSeconds
        request.cancellation = cancellation
        let work = self.work
        nonisolated(unsafe) let then = then
        inner.start(request) { outcome in work.async { then(outcome) } }
    }

    // MARK: Terminations

    /// The tus termination of an upload given up: DELETE of its upload URL when its endpoint
    /// offers `termination` (asked first if not known), else nothing sent and a 204 of spoold's
    /// own (the upload expires on the server). An upload URL spoold does not send to (another
    /// origin than its endpoint's: a log edited by hand) is refused, and held.
    public func abortUpload(_ abort: OwedAbort, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        guard abort.kind == .tusTermination else {
            completion(.refusal(.unsupported, "spoold is not uploading to an S3 store: it cannot abort multipart upload \(abort.uploadID)"))
            return
        }
        if let problem = TusUpload.uploadURLProblem(abort.uploadID, endpoint: abort.url, allowedHosts: settings.allowedHosts) {
            completion(.refusal(.urlRefused, "not sent: \(problem)"))
            return
        }
        work.async { [self] in
            let deadline = settings.terminationDeadlineSeconds
            let terminate: (TusCapabilities) -> Void = { [self] offered in
                guard offered.termination else {
                    completion(.status(204, excerpt: "not sent: the tus server does not offer termination; the upload expires on the server"))
                    return
                }
                step(
                    id: abort.id, attempt: 0, method: "DELETE", url: abort.uploadID, body: BlobBody.none, payload: .none,
                    headers: TusRequestHeaders.merged(own: settings.headers, tus: TusRequestHeaders.resumable), deadlineSeconds: deadline,
                    cancellation: nil, then: completion)
            }
            if let known = known(abort.url) {
                terminate(known)
                return
            }
            probe(abort.url, for: abort.id, headers: settings.headers, deadlineSeconds: deadline) { [self] outcome in
                guard case .answered(let answer) = outcome, let offered = TusCapabilities.offered(answering: answer) else {
                    completion(outcome)
                    return
                }
                remember(offered, for: abort.url)
                terminate(offered)
            }
        }
    }

    /// Sends the terminations `owed` from outside the daemon (`spoold purge`) with the operator's
    /// `headers`, several at once over `transport`, each bounded by `timeoutSeconds`: whether
    /// each was confirmed, in order (`AbortSchedule.judge`).
    public static func terminate(
        _ owed: [OwedAbort], headers: [String: String] = [:], transport: any UploadTransport, clock: any Clock, timeoutSeconds: Double
    ) -> [Bool] {
        guard !owed.isEmpty else { return [] }
        let tus = TusTransport(
            wrapping: transport, settings: Settings(chunkSize: defaultChunkSize, headers: headers, terminationDeadlineSeconds: timeoutSeconds),
            clock: clock)
        let finished = DispatchGroup()
        let confirmed = Mutex([Bool](repeating: false, count: owed.count))
        for (i, abort) in owed.enumerated() {
            finished.enter()
            tus.abortUpload(abort) { outcome in
                confirmed.withLock { $0[i] = AbortSchedule.judge(outcome) == .confirmed }
                finished.leave()
            }
        }
        // An OPTIONS, then a DELETE: two deadlines at most.
        _ = finished.wait(timeout: .now() + 2 * timeoutSeconds + 1)
        return withExtendedLifetime(tus) { confirmed.withLock { $0 } }
    }
}
