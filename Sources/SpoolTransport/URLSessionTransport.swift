import Foundation
import SpoolCore
import SpoolSystem
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads with one long-lived URLSession; every body is read from the descriptor the spool
/// opened (`BlobBody`), never from a path.
///
/// - Bodies: every body streams through `BodyInputStream` as the request's `httpBodyStream`,
///   with an explicit `Content-Length`. It never pauses libcurl, so a server that drops the
///   connection at any byte ends the attempt at once with a network error; when libcurl resends
///   a body on a fresh connection (a reused one turned out dead), `needNewBodyStream` gives it
///   the body again from byte 0. (A `Data` body cannot be rewound: FoundationNetworking traps
///   in `seekInputStream` if a stream is offered for it, and sends a short body if not.)
/// - Answers: tasks have no completion handler, so URLSession does not collect the answer; the
///   delegate keeps its first `excerptLength` bytes for the history and drops the rest. An answer
///   longer than `answerCutBytes` is not read to its end: its status is the outcome, the task is
///   cancelled and its connection aborted (`breakFlood`), so a fast endless answer ends at once;
///   a trickling one ends at the deadline.
///   The delegate queue pushes back on URLSession (`BoundedOperationQueue`), so at most 1 MiB
///   of answer waits for the delegate: memory stays flat whatever the server sends.
/// - Deadline: on Linux, URLSession does not enforce `timeoutIntervalForResource`, so the overall
///   deadline of an attempt (all its redirect hops included) is ours: one sweeper timer, running
///   only while attempts are in flight, cancels the overdue ones (URLSession on Linux does not enforce
///   `timeoutIntervalForResource`). A timer
///   per request would hold its closure until it fired, long after the upload ended.
/// - Ending an attempt never waits for Foundation: the deadline, a cut answer and a cancel end
///   the attempt at once with its outcome, close its blob, and only then tell the task to cancel,
///   on a queue of its own. `cancel` waits for the session's work queue (`workQueue.sync` in
///   swift-corelibs-foundation 6.3), which a flooding connection kept busy for more than 30 s in
///   loaded test runs: an attempt that waited for its task there missed its deadline, and the
///   daemon could not stop. A task ended this way is forgotten: what it reports later is ignored.
/// - Cancelling: a task whose redirect callback has been answered is never cancelled (it is about
///   to complete; FoundationNetworking traps if a cancel overtakes that answer), and a task
///   already told to cancel never gets its redirect answered: each attempt's `AttemptPhase`
///   (preparing, sending, redirected, answer cut, ended) decides both, and
///   `abandoned` keeps the rule for tasks whose attempt has ended. Neither `cancel` nor making a
///   task (`workQueue.sync` too, which may itself wait for the delegate queue,
///   `BoundedOperationQueue`) is ever called from the delegate queue.
/// - Redirects: URLSession is never allowed to follow one itself (the delegate declines). The 3xx
///   comes back here and `RedirectPolicy` decides: a 307/308 to the same origin (or an allowed
///   host) is sent again as a fresh task with the same body, method and headers; anything else
///   ends the attempt with a final refusal.
/// - Multipart (`--form`): the preamble, the blob and the epilogue are streamed as one body.
/// - Content-Digest (`--content-digest`): the body (blob or multipart frame around it) is hashed
///   from the attempt's descriptor before the first request, on a serial queue of its own, and the
///   header kept for every redirect hop. Serial on purpose: hashing is CPU-bound (about 5 ms per
///   MiB), and blocks that hold a thread for seconds on a concurrent queue starve Dispatch's small
///   global pool, which the session's delegate queue needs.
/// - Request headers are never logged (they may hold credentials from `--header-file`).
public final class URLSessionTransport: NSObject, UploadTransport, URLSessionDataDelegate, @unchecked Sendable {
    /// Bytes of response body kept for the attempt history.
    public static let excerptLength = 512

    /// Answer bytes read before an answer counts as complete by its status alone.
    public static let answerCutBytes: Int64 = 1 << 20

    /// One attempt of one item, across its redirect hops; mutated only under `state`'s lock.
    private final class Attempt: @unchecked Sendable {
        let request: UploadRequest
        let completion: @Sendable (UploadOutcome) -> Void
        let deadline: DispatchTime
        var url: URL
        /// The `Content-Digest` value, computed once per attempt before the first request.
        var contentDigest: String?
        var phase = AttemptPhase<URLSessionTask>()
        var hops = 0
        /// The start of the current hop's answer, at most `excerptLength` bytes.
        var excerpt: [UInt8] = []
        /// Answer bytes of the current hop so far.
        var received: Int64 = 0
        /// How far the current hop's body was read (the stall watch).
        var progress: BodyProgress?

        /// Starts a hop: nothing received yet.
        func resetAnswer() {
            excerpt = []
            received = 0
        }

        init(_ request: UploadRequest, url: URL, deadline: DispatchTime, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            self.request = request
            self.url = url
            self.deadline = deadline
            self.completion = completion
        }
    }

    /// What the transport tracks, under one lock.
    private struct State {
        var attempts: [Int: Attempt] = [:]
        /// Task identifier → attempt key, for the delegate callbacks.
        var keyByTask: [Int: Int] = [:]
        /// Tasks told to cancel after their attempt ended, until they complete: their redirect
        /// callback is never answered.
        var abandoned: Set<Int> = []
    }

    private var session: URLSession!
    private let deadlineSeconds: Double
    /// Bytes of each final answer passed on in the outcome for the engine's rules (0: none).
    private let answerLimit: Int
    private let redirects: RedirectPolicy
    private let timers = DispatchQueue(label: "spoold.transport.deadlines")
    private let sweeper: any DispatchSourceTimer
    /// Whether `sweeper` is resumed; changed only under `state`'s lock.
    private let sweeping = Mutex(false)
    private let digests = DispatchQueue(label: "spoold.transport.digests")
    /// Where ended attempts' tasks are told to cancel: a cancel may wait for Foundation's work
    /// queue for a long time, and nothing else waits for this queue.
    private let cancels: DispatchQueue
    /// Where a cut answer's connection is found by its traffic and aborted
    /// (`breakFlood`), apart from `cancels`, whose cancel may be stuck.
    private let floods = DispatchQueue(label: "spoold.transport.floods")
    /// Answer bytes handed to spoold so far, all attempts (`UndeliveredFlood`).
    private let delivered = Atomic<UInt64>(0)
    /// The sweeper's view of the connections' traffic (`watchUndelivered`).
    private let undeliveredWatch: Mutex<UndeliveredFlood>
    private let undeliveredResets = Atomic<Int>(0)
    /// Where uploads are started, in order: reading a small blob and making its task take the
    /// caller's time (the engine's loop) otherwise.
    private let starts = DispatchQueue(label: "spoold.transport.starts")
    private let state = Mutex(State())
    private let nextKey = Mutex(0)
    /// A started body unread this long has its connections looked at (`StalledUpload`).
    private let quietLimitSeconds: Double
    /// Runs before each body read (tests only).
    private let bodyReadHook: (@Sendable () -> Void)?
    /// `--limit-rate`: the bytes per second every body read shares.
    private let rate: BodyRateGate?

    /// - Parameters:
    ///   - concurrency: connections per host, matching the engine's uploads at once.
    ///   - deadlineSeconds: overall time one attempt may take, redirects included.
    ///   - idleSeconds: longest silence on the connection.
    ///   - redirects: which redirects are followed.
    ///   - answerLimit: bytes of each answer's body kept in the outcome (`--success-json`).
    ///   - cancelQueue: where tasks are told to cancel (a test holds it, as a busy Foundation does).
    ///   - quietLimitSeconds: the stall watch's limit (default `StalledUpload.quietLimitSeconds`).
    ///   - bodyReadHook: runs before each body read (a test holds it, as a lost write event does).
    ///   - watchWindowSeconds: the window of `UndeliveredFlood` (shorter in tests).
    ///   - limitRate: `--limit-rate`, the bytes per second in force for all bodies together
    ///     (`BodyRateGate`).
    public init(
        concurrency: Int, deadlineSeconds: Double, idleSeconds: Double, redirects: RedirectPolicy = RedirectPolicy(),
        answerLimit: Int = 0, cancelQueue: DispatchQueue? = nil, quietLimitSeconds: Double? = nil,
        bodyReadHook: (@Sendable () -> Void)? = nil, watchWindowSeconds: Double = UndeliveredFlood.defaultWindowSeconds,
        limitRate: SendRate? = nil
    ) {
        rate = limitRate.map(BodyRateGate.init(rate:))
        undeliveredWatch = Mutex(UndeliveredFlood(windowSeconds: watchWindowSeconds))
        cancels = cancelQueue ?? DispatchQueue(label: "spoold.transport.cancels")
        self.quietLimitSeconds = quietLimitSeconds ?? StalledUpload.quietLimitSeconds(idleSeconds: idleSeconds)
        self.bodyReadHook = bodyReadHook
        self.deadlineSeconds = deadlineSeconds
        self.answerLimit = answerLimit
        self.redirects = redirects
        sweeper = DispatchSource.makeTimerSource(queue: timers)
        // Deadline precision: a quarter of the deadline (or of the stall watch's limit, or a little
        // over the flood watch's window), between 50 ms and 1 s.
        let interval = min(1.0, max(0.05, min(deadlineSeconds, self.quietLimitSeconds, watchWindowSeconds + 0.1) / 4))
        sweeper.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        super.init()
        sweeper.setEventHandler { [weak self] in self?.sweep() }
        session = URLSessionTransport.makeSession(
            concurrency: concurrency, deadlineSeconds: deadlineSeconds, idleSeconds: idleSeconds, delegate: self)
    }

    /// The session spoold uploads with: no cache, no cookies, no stored credentials, one delegate
    /// queue. Public so the benchmark's bare URLSession loop measures exactly these settings.
    public static func makeSession(
        concurrency: Int, deadlineSeconds: Double, idleSeconds: Double, delegate: (any URLSessionDelegate)?
    ) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.timeoutIntervalForRequest = idleSeconds
        configuration.timeoutIntervalForResource = deadlineSeconds
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // 64 pieces of 16 KiB at most wait for the delegate (see BoundedOperationQueue).
        let queue = delegate == nil ? OperationQueue() : BoundedOperationQueue(limit: 64)
        queue.maxConcurrentOperationCount = 1
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        // libdispatch traps on releasing a suspended source: resume it, then cancel it.
        sweeping.withLock { running in if !running { sweeper.resume() } }
        sweeper.cancel()
    }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        guard let url = URL(string: request.url), HTTPOrigin(request.url) != nil else {
            request.release()
            completion(.refusal(.urlRefused, "invalid upload URL '\(request.url)'"))
            return
        }
        // Foundation drops a field it cannot send, silently: refused here instead, with why.
        if let problem = request.headerProblem {
            request.release()
            completion(UploadRequest.refusedHeaders(problem))
            return
        }
        let key = nextKey.withLock { key in
            key += 1
            return key
        }
        let seconds = min(deadlineSeconds, request.deadlineSeconds ?? deadlineSeconds)
        let attempt = Attempt(request, url: url, deadline: .now() + seconds, completion: completion)
        state.withLock { state in
            state.attempts[key] = attempt
            setSweeping(true)
        }
        request.cancellation?.whenCancelled { [weak self] in self?.cancel(key) }
        if let algorithm = request.contentDigest {
            digests.async { [weak self] in self?.digestThenSend(key, algorithm, request, to: url) }
        } else {
            starts.async { [weak self] in self?.send(key, to: url) }
        }
    }

    /// Hashes the body, keeps the header value for the attempt, and sends it.
    private func digestThenSend(_ key: Int, _ algorithm: ContentDigest, _ request: UploadRequest, to url: URL) {
        do {
            let value = algorithm.headerValue(digest: try BodyDigest.sha256(of: request.bodyParts))
            state.withLock { state in state.attempts[key]?.contentDigest = value }
        } catch {
            finish(key, .failed(.bodyUnhashable("compute the Content-Digest", "\(error)")))
            return
        }
        send(key, to: url)
    }

    public func cancelAll() {
        for key in state.withLock({ Array($0.attempts.keys) }) { end(key, .cancelled) }
    }

    /// Cancels one attempt (`UploadRequest.cancellation`), as `cancelAll` does every one.
    private func cancel(_ key: Int) { end(key, .cancelled) }

    /// Ends an attempt now with `outcome` (the deadline's, `.cancelled`), whatever its task is
    /// doing, and tells the task, if it may be, to cancel (see the type's note on ending an attempt).
    private func end(_ key: Int, _ outcome: UploadOutcome) {
        let ended: (attempt: Attempt, cancel: URLSessionTask?)? = state.withLock { state in
            guard let attempt = state.attempts[key] else { return nil }
            let running = attempt.phase.task
            let cancel = attempt.phase.end()
            forget(key, running: running, cancelling: cancel, in: &state)
            return (attempt, cancel)
        }
        guard let ended else { return }
        ended.attempt.request.release()
        if let task = ended.cancel { cancels.async { task.cancel() } }
        ended.attempt.completion(outcome)
    }

    /// Removes an attempt and its running task's entry, under `state`'s lock: the task's later
    /// callbacks find nothing; `cancelling` (about to be told to cancel) is kept in `abandoned`.
    private func forget(_ key: Int, running: URLSessionTask?, cancelling: URLSessionTask?, in state: inout State) {
        state.attempts[key] = nil
        if let running { state.keyByTask[running.taskIdentifier] = nil }
        if let cancelling { state.abandoned.insert(cancelling.taskIdentifier) }
    }

    /// Starts (or, after a redirect, restarts) the attempt's task to `url`. The task is made
    /// outside `state`'s lock: making a task waits for the session's own queue, and completions
    /// must not wait for that.
    private func send(_ key: Int, to url: URL) {
        // An attempt that ended (deadline, cancel) while its body was hashed or its next hop
        // decided is gone from the table: nothing is sent.
        let found: (request: UploadRequest, contentDigest: String?)? = state.withLock { state in
            guard let attempt = state.attempts[key] else { return nil }
            attempt.url = url
            return (attempt.request, attempt.contentDigest)
        }
        guard let (request, contentDigest) = found else { return }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        // Without it, Foundation on Linux sends "spoold (unknown version)"; a --header wins.
        urlRequest.setValue(SpooldVersion.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.setValue(request.form?.headerValue ?? request.contentType, forHTTPHeaderField: "Content-Type")
        urlRequest.setValue(request.id.rawValue, forHTTPHeaderField: "Idempotency-Key")
        if let contentDigest { urlRequest.setValue(contentDigest, forHTTPHeaderField: ContentDigest.headerName) }
        if case .none = request.payload {} else {
            let parts = request.bodyParts
            // A stream's length is unknown to URLSession, which would send it chunked. A blank
            // Transfer-Encoding stops libcurl from choosing chunked and is not sent itself.
            urlRequest.setValue(String(BodyInputStream.length(of: parts)), forHTTPHeaderField: "Content-Length")
            urlRequest.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
            let progress = BodyProgress(total: BodyInputStream.length(of: parts))
            state.withLock { state in state.attempts[key]?.progress = progress }
            urlRequest.httpBodyStream = BodyInputStream(parts, progress: progress, readHook: bodyReadHook, rate: rate)
        }
        let task = session.dataTask(with: urlRequest)
        let stillWanted: Bool = state.withLock { state in
            guard let attempt = state.attempts[key], attempt.phase.taskMade(task) else { return false }
            attempt.resetAnswer()
            state.keyByTask[task.taskIdentifier] = key
            return true
        }
        if stillWanted {
            task.resume()
        } else {
            // Ended while the task was being made: it never starts.
            cancels.async { task.cancel() }
        }
    }

    private func handle(_ key: Int, url: URL, excerpt bytes: [UInt8], received: Int64, response: URLResponse?, error: Error?) {
        let found: (hops: Int, request: UploadRequest)? = state.withLock { state in
            guard let attempt = state.attempts[key] else { return nil }
            attempt.phase.taskEnded()
            return (attempt.hops, attempt.request)
        }
        guard let found else { return }
        if let failure = found.request.body.failure {
            finish(key, .refusal(.blobChanged, failure))
            return
        }
        if let http = response as? HTTPURLResponse, error == nil {
            let excerpt = URLSessionTransport.excerpt(Data(bytes))
            let location = http.value(forHTTPHeaderField: "Location").flatMap {
                URL(string: $0, relativeTo: url)?.absoluteURL.absoluteString
            }
            let decision = found.request.followsRedirects
                ? redirects.decide(
                    status: http.statusCode, method: found.request.method, from: url.absoluteString, location: location,
                    hopsSoFar: found.hops)
                : .notARedirect
            switch decision {
            case .follow(let target):
                guard let next = URL(string: target) else { break }
                state.withLock { $0.attempts[key]?.hops += 1 }
                // Not here: making a task waits for the session's work queue, which may be
                // waiting for this (delegate) queue.
                starts.async { [weak self] in self?.send(key, to: next) }
                return
            case .refuse(let reason):
                finish(key, .refusal(.redirectRefused, reason, status: http.statusCode, excerpt: excerpt))
                return
            case .notARedirect:
                break
            }
            var answer = HTTPAnswer(status: http.statusCode, excerpt: excerpt)
            answer.etag = http.value(forHTTPHeaderField: "ETag")
            answer.contentLength = http.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
            let keep = max(answerLimit, found.request.answerKeep)
            if keep > 0 {
                answer.body = Array(bytes.prefix(keep))
                answer.bodyTruncated = received > Int64(keep)
            }
            if let value = http.value(forHTTPHeaderField: "Retry-After") {
                answer.retryAfterSeconds = RetryAfter.seconds(from: value, now: Date())
            }
            finish(key, .answered(answer))
            return
        }
        finish(key, URLSessionTransport.networkOutcome(error))
    }

    /// Cancels every attempt past its deadline, and every stalled one (`StalledUpload`: its body
    /// unread for `quietLimitSeconds` while no connection to its server has a byte queued);
    /// stops itself when nothing is in flight.
    private func sweep() {
        let now = DispatchTime.now()
        var overdue: [Int] = []
        var quiet: [(key: Int, port: UInt16)] = []
        var ports = Set<UInt16>()
        state.withLock { state in
            if state.attempts.isEmpty { setSweeping(false) }
            // With --limit-rate the bodies take turns at the gate: each may wait its turn on top.
            let limit = quietLimitSeconds + (rate?.longestTurnSeconds(readers: state.attempts.count) ?? 0)
            for (key, attempt) in state.attempts {
                let port = URLSessionTransport.port(of: attempt.url)
                if let port { ports.insert(port) }
                if attempt.deadline <= now {
                    overdue.append(key)
                } else if let port, let seconds = attempt.progress?.quietSeconds(now: now.uptimeNanoseconds), seconds >= limit {
                    quiet.append((key, port))
                }
            }
        }
        for key in overdue { end(key, timeoutOutcome) }
        for port in Set(quiet.map(\.port)) where StalledUpload.writerStopped(unsentBytes: TCPConnections.unsentBytes(toPort: port)) {
            for attempt in quiet where attempt.port == port { end(attempt.key, stallOutcome) }
        }
        watchUndelivered(ports: ports, at: now)
    }

    /// The server port of an attempt's URL (whose connections the watches look at).
    private static func port(of url: URL) -> UInt16? { HTTPOrigin(url.absoluteString).flatMap { UInt16(exactly: $0.port) } }

    /// Aborts a connection that keeps receiving what URLSession never hands over (a redirect's
    /// endless body, `UndeliveredFlood`): the task ends with a network error, which is retried.
    private func watchUndelivered(ports: Set<UInt16>, at now: DispatchTime) {
        guard !ports.isEmpty else { return }
        var sample: [Int32: UInt64] = [:]
        for port in ports { sample.merge(TCPConnections.bytesReceived(fromPort: port)) { a, _ in a } }
        let handedOver = delivered.load(ordering: .relaxed)
        let flooded = undeliveredWatch.withLock {
            $0.observe(sample, delivered: handedOver, at: Double(now.uptimeNanoseconds) / 1e9,
                       minimumBytesPerSecond: URLSessionTransport.undeliveredBytesPerSecond)
        }
        if let flooded {
            TCPConnections.abort(flooded)
            undeliveredResets.add(1, ordering: .relaxed)
        }
    }

    /// Connections reset by the watch of bytes never handed over (`watchUndelivered`), so far.
    public var connectionsResetForUndeliveredBytes: Int { undeliveredResets.load(ordering: .relaxed) }

    private var stallOutcome: UploadOutcome { .failed(.stalled(quietSeconds: quietLimitSeconds)) }

    /// Resumes or suspends the sweeper, balanced; call under `state`'s lock.
    private func setSweeping(_ on: Bool) {
        sweeping.withLock { running in
            guard running != on else { return }
            running = on
            if on { sweeper.resume() } else { sweeper.suspend() }
        }
    }

    /// Ends the attempt exactly once: forgets it, closes its blob, reports the outcome.
    private func finish(_ key: Int, _ outcome: UploadOutcome) {
        guard let attempt = state.withLock({ $0.attempts.removeValue(forKey: key) }) else { return }
        attempt.request.release()
        attempt.completion(outcome)
    }

    private var timeoutOutcome: UploadOutcome { .failed(.deadline(seconds: deadlineSeconds)) }

    // MARK: - URLSession delegate (its serial delegate queue)

    /// Keeps the first `excerptLength` bytes of the answer and drops the rest; cancels the task
    /// once the answer passes `answerCutBytes`.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let cut: (key: Int, url: URL, excerpt: [UInt8], received: Int64)? = state.withLock { state in
            guard let key = state.keyByTask[dataTask.taskIdentifier], let attempt = state.attempts[key] else { return nil }
            // The history's excerpt, or with `--success-json` the part of the answer the rule reads.
            delivered.add(UInt64(data.count), ordering: .relaxed)
            let room = max(URLSessionTransport.excerptLength, answerLimit, attempt.request.answerKeep) - attempt.excerpt.count
            if room > 0 { attempt.excerpt.append(contentsOf: data.prefix(room)) }
            attempt.received += Int64(data.count)
            guard attempt.received > URLSessionTransport.answerCutBytes, dataTask.response != nil,
                  let task = attempt.phase.answerPassedCut() else { return nil }
            // The task is forgotten (the attempt goes on without it: its status is the outcome).
            state.keyByTask[task.taskIdentifier] = nil
            state.abandoned.insert(task.taskIdentifier)
            defer { attempt.resetAnswer() }
            return (key, attempt.url, attempt.excerpt, attempt.received)
        }
        guard let cut else { return }
        // Not here: `cancel` waits for the session's work queue, which may be waiting for this one.
        cancels.async { dataTask.cancel() }
        if let port = URLSessionTransport.port(of: cut.url) {
            floods.async { URLSessionTransport.breakFlood(fromPort: port) }
        }
        handle(cut.key, url: cut.url, excerpt: cut.excerpt, received: cut.received, response: dataTask.response, error: nil)
    }

    /// Sampling window and the least rate that counts as a flood (`breakFlood`).
    static let floodWindowSeconds = 0.05
    static let floodBytesPerSecond = Double(1 << 20)
    /// The least rate of bytes received and never handed over that makes a connection suspect
    /// (`UndeliveredFlood`): only headers legitimately are, a few hundred bytes per answer.
    static let undeliveredBytesPerSecond = Double(256 << 10)

    /// Aborts (resets) the connection a server is flooding: of this process's TCP connections to
    /// `port` (the cut answer's server), the one that received the most over
    /// `floodWindowSeconds`, at `floodBytesPerSecond` or more. The task's `cancel` would close it, but it waits for Foundation's work queue,
    /// which the flood keeps busy: for seconds, during which FoundationNetworking holds ~5-8 MiB
    /// more per second (README "Bodies and answers"). The server's next send fails at once;
    /// libcurl's next read fails and the task ends. Uploads that share the connection with the
    /// flooded answer (as HTTP/2 streams) lose it too: their attempts are retried.
    static func breakFlood(fromPort port: UInt16) {
        let before = TCPConnections.bytesReceived(fromPort: port)
        usleep(UInt32(floodWindowSeconds * 1_000_000))
        let after = TCPConnections.bytesReceived(fromPort: port)
        if let fd = FloodingConnection.pick(
            before: before, after: after, seconds: floodWindowSeconds, minimumBytesPerSecond: floodBytesPerSecond)
        {
            TCPConnections.abort(fd)
        }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let found: (key: Int, url: URL, excerpt: [UInt8], received: Int64)? = state.withLock { state in
            state.abandoned.remove(task.taskIdentifier)
            guard let key = state.keyByTask.removeValue(forKey: task.taskIdentifier), let attempt = state.attempts[key] else { return nil }
            defer { attempt.resetAnswer() }
            return (key, attempt.url, attempt.excerpt, attempt.received)
        }
        guard let found else { return }
        handle(found.key, url: found.url, excerpt: found.excerpt, received: found.received, response: task.response, error: error)
    }

    /// Declines every redirect: the 3xx comes back to `handle`, which applies `RedirectPolicy`.
    /// A task already told to cancel is left unanswered (see the type's note on cancelling).
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let answer = state.withLock { state in
            guard let key = state.keyByTask[task.taskIdentifier], let attempt = state.attempts[key] else {
                return !state.abandoned.contains(task.taskIdentifier)
            }
            return attempt.phase.redirectAsked(task)
        }
        if answer { completionHandler(nil) }
    }

    /// A fresh stream of the same body from byte 0, when libcurl must send it again (a reused
    /// connection that turned out dead).
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        let found = state.withLock { state in
            state.keyByTask[task.taskIdentifier].flatMap { state.attempts[$0] }.map { ($0.request, $0.progress) }
        }
        found?.1?.restarted()
        completionHandler(found.map { BodyInputStream($0.0.bodyParts, progress: $0.1, readHook: bodyReadHook, rate: rate) })
    }

    static func networkOutcome(_ error: Error?) -> UploadOutcome {
        let nsError = error as NSError?
        let code = URLError.Code(rawValue: nsError?.code ?? URLError.unknown.rawValue) ?? .unknown
        let fallback = nsError?.localizedDescription ?? "unknown error"
        // libcurl's TLS failures reach us as code -1 with curl's text ("SSL certificate problem: ...").
        if code == .unknown, isTLSFailure(fallback) {
            return .failed(.tlsHandshake(fallback))
        }
        // So do libcurl's limits on an answer's head: Foundation passes only its text on (see
        // `UploadOutcome.answerHeadTooLarge`).
        if code == .unknown, fallback == "Out of memory" || fallback.hasPrefix("Too large response headers") {
            return .failed(.answerHeadTooLarge)
        }
        switch code {
        case .cannotConnectToHost: return .failed(.connectionRefused)
        case .cannotFindHost, .dnsLookupFailed: return .failed(.hostNotFound)
        case .notConnectedToInternet: return .failed(.noNetwork)
        case .timedOut: return .failed(.idleTimeout)
        case .networkConnectionLost: return .failed(.connectionLost)
        case .badServerResponse: return .failed(.badResponse(nil))
        case .secureConnectionFailed: return .failed(.tlsHandshake(nil))
        default: return .failed(.unidentified(describe(code, fallback: fallback), beforeSending: isUnreachable(code)))
        }
    }

    static func isTLSFailure(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.contains("ssl") || lower.contains("tls") || lower.contains("certificate")
    }

    /// Errors that mean the request never reached a server: an outage, not the item's fault.
    static func isUnreachable(_ code: URLError.Code) -> Bool {
        switch code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
             .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
             .internationalRoamingOff, .callIsActive, .dataNotAllowed:
            true
        default:
            false
        }
    }

    static func describe(_ code: URLError.Code, fallback: String) -> String {
        switch code {
        case .cannotConnectToHost: "connection refused"
        case .cannotFindHost, .dnsLookupFailed: "host not found"
        case .notConnectedToInternet: "no network"
        case .timedOut: "timed out (no data within the idle timeout)"
        case .networkConnectionLost: "connection lost mid-request"
        case .badServerResponse: "bad server response"
        case .cancelled: "cancelled"
        case .secureConnectionFailed: "TLS handshake failed"
        case .fileDoesNotExist, .noPermissionsToReadFile: "cannot read the blob"
        default: fallback
        }
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// The first bytes of a response body as one printable line.
    static func excerpt(_ data: Data?) -> String? {
        guard let data, !data.isEmpty else { return nil }
        let text = String(decoding: data.prefix(excerptLength), as: UTF8.self)
        let cleaned = String(text.unicodeScalars.map { $0.value < 32 || $0.value == 127 ? " " : Character($0) })
        return cleaned.trimmingCharacters(in: .whitespaces)
    }
}
