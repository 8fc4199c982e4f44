import Foundation
import SpoolCore
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads with one long-lived URLSession: a driver of `HTTPAttempt`, which decides every rule
/// (headers, redirects, the answer's cut, the deadline, the outcome). This file reports what
/// URLSession does and does what the attempt says, within what FoundationNetworking allows:
/// - Bodies stream from the descriptor the spool opened (`BodyReader` through `BodyInputStream`),
///   with an explicit `Content-Length`; never a `Data` body (FoundationNetworking cannot rewind
///   it) nor `uploadTask(fromFile:)` (a path, and pauses that trap on a dropped connection). When
///   libcurl sends a body again on a fresh connection, `needNewBodyStream` gives it from byte 0.
/// - Answers: tasks have no completion handler; the delegate hands each piece to the attempt.
///   The delegate queue pushes back on URLSession (`BoundedOperationQueue`), so at most 1 MiB of
///   answer waits for it. An answer cut by the attempt ends at once: its task is cancelled and
///   its connection aborted (`ConnectionWatch.breakFlood`).
/// - The deadline is ours (URLSession on Linux does not enforce `timeoutIntervalForResource`):
///   one sweeper timer, running only while attempts are in flight, asks each attempt, and runs
///   the stall and flood watches (`ConnectionWatch`).
/// - Ending an attempt never waits for Foundation: its outcome is reported at once, and only then
///   is its task told to cancel, on a queue of its own (`cancel` waits for the session's work
///   queue, which a flooding connection kept busy for more than 30 s in loaded test runs). What a
///   forgotten task reports later is ignored.
/// - A task whose redirect callback has been answered is never cancelled, and a task told to
///   cancel never gets its redirect answered (FoundationNetworking traps otherwise): each
///   attempt's `AttemptPhase` decides both. Neither `cancel` nor making a task (`workQueue.sync`,
///   which may wait for the delegate queue) is ever called from the delegate queue.
/// - Redirects: URLSession never follows one itself (the delegate declines); the 3xx comes back
///   to the attempt, which sends the next hop as a fresh task or refuses.
/// - The Content-Digest is computed (and a compressed body measured) from the attempt's
///   descriptor before the first request, on a serial queue of its own (hashing is CPU-bound, and Dispatch's small pool must stay free for
///   the delegate queue). Request headers are never logged (they may hold credentials).
public final class URLSessionTransport: NSObject, UploadTransport, URLSessionDataDelegate, @unchecked Sendable {
    /// One attempt of one item, across its hops; mutated only under `state`'s lock.
    private final class Attempt: @unchecked Sendable {
        /// Measured once its body is prepared (`HTTPAttempt.Action.prepareBody`).
        var request: UploadRequest
        let completion: @Sendable (UploadOutcome) -> Void
        var core: HTTPAttempt
        var phase = AttemptPhase<URLSessionTask>()
        /// How far the current hop's body was read (bytes sent, the stall watch).
        var progress: BodyProgress?

        init(_ request: UploadRequest, core: HTTPAttempt, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            (self.request, self.core, self.completion) = (request, core, completion)
        }
    }

    private struct State {
        var attempts: [Int: Attempt] = [:]
        /// Task identifier → attempt key, for the delegate callbacks.
        var keyByTask: [Int: Int] = [:]
        /// Tasks told to cancel after their attempt ended, until they complete: their redirect
        /// callback is never answered.
        var abandoned: Set<Int> = []
        var nextKey = 0
    }

    private var session: URLSession!
    private let deadlineSeconds: Double
    private let answerLimit: Int
    private let redirects: RedirectPolicy
    private let sweeper: any DispatchSourceTimer
    /// Whether `sweeper` is resumed; changed only under `state`'s lock.
    private let sweeping = Mutex(false)
    private let digests = DispatchQueue(label: "spoold.transport.digests")
    /// Where tasks are told to cancel: a cancel may wait for Foundation's work queue for long.
    private let cancels: DispatchQueue
    /// Where tasks are made and started, in order, off the caller's (the engine's) thread.
    private let starts = DispatchQueue(label: "spoold.transport.starts")
    private let state = Mutex(State())
    private let watch: ConnectionWatch
    /// A started body unread this long has its connections looked at (`StalledUpload`).
    private let quietLimitSeconds: Double
    private let bodyReadHook: (@Sendable () -> Void)?
    /// `--limit-rate`: the bytes per second every body read shares, whichever transport.
    private let rate: BodyRateGate?

    /// - Parameters:
    ///   - concurrency: connections per host, matching the engine's uploads at once.
    ///   - deadlineSeconds: overall time one attempt may take, redirects included.
    ///   - idleSeconds: longest silence on the connection.
    ///   - answerLimit: bytes of each answer's body kept in the outcome (`--success-json`).
    ///   - cancelQueue: where tasks are told to cancel (a test holds it, as a busy Foundation does).
    ///   - quietLimitSeconds: the stall watch's limit (default `StalledUpload.quietLimitSeconds`).
    ///   - bodyReadHook: runs before each body read (a test holds it, as a lost write event does).
    ///   - watchWindowSeconds: the window of `UndeliveredFlood` (shorter in tests).
    ///   - rate: `--limit-rate`, the bytes per second in force (`SendRate`), shared with every
    ///     other transport of the daemon.
    public init(
        concurrency: Int, deadlineSeconds: Double, idleSeconds: Double, redirects: RedirectPolicy = RedirectPolicy(),
        answerLimit: Int = 0, cancelQueue: DispatchQueue? = nil, quietLimitSeconds: Double? = nil,
        bodyReadHook: (@Sendable () -> Void)? = nil, watchWindowSeconds: Double = UndeliveredFlood.defaultWindowSeconds,
        rate: BodyRateGate? = nil
    ) {
        (self.rate, self.bodyReadHook, self.deadlineSeconds) = (rate, bodyReadHook, deadlineSeconds)
        (self.answerLimit, self.redirects) = (answerLimit, redirects)
        watch = ConnectionWatch(windowSeconds: watchWindowSeconds)
        cancels = cancelQueue ?? DispatchQueue(label: "spoold.transport.cancels")
        self.quietLimitSeconds = quietLimitSeconds ?? StalledUpload.quietLimitSeconds(idleSeconds: idleSeconds)
        sweeper = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "spoold.transport.deadlines"))
        // Precision: a quarter of the deadline (or the stall limit, or a little over the flood
        // watch's window), between 50 ms and 1 s.
        let interval = min(1.0, max(0.05, min(deadlineSeconds, self.quietLimitSeconds, watchWindowSeconds + 0.1) / 4))
        sweeper.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        super.init()
        sweeper.setEventHandler { [weak self] in self?.sweep() }
        session = URLSessionTransport.makeSession(
            concurrency: concurrency, deadlineSeconds: deadlineSeconds, idleSeconds: idleSeconds, delegate: self)
    }

    deinit {
        // libdispatch traps on releasing a suspended source: resume it, then cancel it.
        sweeping.withLock { running in if !running { sweeper.resume() } }
        sweeper.cancel()
    }

    /// Connections reset by the watch of bytes never handed over, so far.
    public var connectionsResetForUndeliveredBytes: Int { watch.resetsForUndeliveredBytes }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        let core = HTTPAttempt(request.attempt(deadlineSeconds: deadlineSeconds, redirects: redirects, answerLimit: answerLimit), now: Now.seconds)
        let key = state.withLock { state in
            state.nextKey += 1
            state.attempts[state.nextKey] = Attempt(request, core: core, completion: completion)
            setSweeping(true)
            return state.nextKey
        }
        request.cancellation?.whenCancelled { [weak self] in self?.apply(key) { attempt, _ in attempt.core.cancel() } }
        apply(key) { attempt, _ in attempt.core.start() }
    }

    public func cancelAll() {
        for key in state.withLock({ Array($0.attempts.keys) }) { apply(key) { attempt, _ in attempt.core.cancel() } }
    }

    /// Hands an event to attempt `key`'s core under the lock and does what it says. A `finish`
    /// forgets the attempt in the same hold (so it is reported once) and tells its task, if it may
    /// be, to cancel.
    private func apply(_ key: Int, _ event: (Attempt, inout State) -> HTTPAttempt.Action) {
        let decided: (Attempt, HTTPAttempt.Action, cancel: URLSessionTask?)? = state.withLock { state in
            guard let attempt = state.attempts[key] else { return nil }
            let action = event(attempt, &state)
            guard case .finish = action else { return (attempt, action, nil) }
            let running = attempt.phase.task
            let cancel = attempt.phase.end()
            state.attempts[key] = nil
            if let running { state.keyByTask[running.taskIdentifier] = nil }
            if let cancel { state.abandoned.insert(cancel.taskIdentifier) }
            return (attempt, action, cancel)
        }
        guard let (attempt, action, cancel) = decided else { return }
        switch action {
        case .none, .stopReading:
            break
        case .prepareBody:
            digests.async { [weak self] in
                do {
                    let (prepared, digest) = try attempt.request.prepared()
                    self?.apply(key) { attempt, _ in
                        attempt.request = prepared
                        return attempt.core.bodyPrepared(contentDigest: digest)
                    }
                } catch {
                    self?.apply(key) { attempt, _ in attempt.core.bodyUnprepared("\(error)") }
                }
            }
        case .send(let hop):
            // Not on the caller's thread, nor the delegate queue: making a task waits for the
            // session's work queue.
            starts.async { [weak self] in self?.send(key, hop) }
        case .finish(let outcome):
            attempt.request.release()
            if let cancel { cancels.async { cancel.cancel() } }
            attempt.completion(outcome)
        }
    }

    /// Makes and starts the task of `hop`, outside the lock.
    private func send(_ key: Int, _ hop: HTTPAttempt.Hop) {
        guard let request = state.withLock({ $0.attempts[key]?.request }) else { return }
        guard let url = URL(string: hop.url) else {
            apply(key) { attempt, _ in attempt.core.hopRefused("invalid upload URL '\(hop.url)'") }
            return
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for field in hop.headers { urlRequest.setValue(field.value, forHTTPHeaderField: field.name) }
        var progress: BodyProgress?
        if let body = request.requestBody {
            // A stream's length is unknown to URLSession, which would send it chunked. A blank
            // Transfer-Encoding stops libcurl from choosing chunked and is not sent itself.
            urlRequest.setValue(String(body.length), forHTTPHeaderField: "Content-Length")
            urlRequest.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
            progress = BodyProgress(total: body.length)
            urlRequest.httpBodyStream = BodyInputStream(BodyReader(body, progress: progress, rate: rate, readHook: bodyReadHook))
        }
        let task = session.dataTask(with: urlRequest)
        let wanted: Bool = state.withLock { state in
            guard let attempt = state.attempts[key], attempt.phase.taskMade(task) else { return false }
            attempt.progress = progress
            state.keyByTask[task.taskIdentifier] = key
            return true
        }
        if wanted { task.resume() } else { cancels.async { task.cancel() } }  // ended while it was made
    }

    /// Ends every attempt past its deadline and every stalled one (its body unread for
    /// `quietLimitSeconds` while no connection to its server has a byte queued); stops itself
    /// when nothing is in flight.
    private func sweep() {
        let now = DispatchTime.now()
        var due: [Int] = []
        var quiet: [(key: Int, port: UInt16, seconds: Double)] = []
        var ports = Set<UInt16>()
        state.withLock { state in
            if state.attempts.isEmpty { setSweeping(false) }
            // With --limit-rate the bodies take turns at the gate: each may wait its turn on top.
            let limit = quietLimitSeconds + (rate?.longestTurnSeconds(readers: state.attempts.count) ?? 0)
            for (key, attempt) in state.attempts {
                let port = attempt.core.hop.flatMap { ConnectionWatch.port(of: $0.url) }
                if let port { ports.insert(port) }
                if attempt.core.deadline <= Now.seconds(now) {
                    due.append(key)
                } else if let port, let seconds = attempt.progress?.quietSeconds(now: now.uptimeNanoseconds), seconds >= limit {
                    quiet.append((key, port, seconds))
                }
            }
        }
        for key in due { apply(key) { attempt, _ in attempt.core.deadlineCheck(now: Now.seconds(now)) } }
        for port in Set(quiet.map(\.port)) where ConnectionWatch.writerStopped(port: port) {
            for quiet in quiet where quiet.port == port { apply(quiet.key) { attempt, _ in attempt.core.stalled(quietSeconds: quietLimitSeconds) } }
        }
        watch.watchUndelivered(ports: ports, at: now)
    }

    /// Resumes or suspends the sweeper, balanced; call under `state`'s lock.
    private func setSweeping(_ on: Bool) {
        sweeping.withLock { running in
            guard running != on else { return }
            running = on
            if on { sweeper.resume() } else { sweeper.suspend() }
        }
    }

    /// The attempt a task's callback belongs to, if it still does.
    private func key(of task: URLSessionTask) -> Int? { state.withLock { $0.keyByTask[task.taskIdentifier] } }

    // MARK: - URLSession delegate (its serial delegate queue)

    /// Hands the answer's bytes to the attempt; one it cuts ends here, its task cancelled and its
    /// connection aborted.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        watch.handedOver(data.count)
        guard let key = key(of: dataTask), let http = dataTask.response as? HTTPURLResponse else { return }
        var cut = false
        apply(key) { attempt, state in
            if attempt.core.awaitsHead { attempt.core.answerHead(URLSessionTransport.head(of: http)) }
            guard data.withUnsafeBytes({ attempt.core.answerBytes($0) }) == .stopReading, let task = attempt.phase.answerPassedCut()
            else { return .none }
            // The task is forgotten: the attempt goes on without it, its status the outcome.
            cut = true
            state.keyByTask[task.taskIdentifier] = nil
            state.abandoned.insert(task.taskIdentifier)
            attempt.core.bodySent(totalBytes: attempt.progress?.bytes ?? 0)
            return attempt.core.transferEnded(
                status: http.statusCode, error: .stoppedOnRequest, bodyFailure: attempt.request.body.failure, now: Now.seconds, date: Now.date)
        }
        guard cut else { return }
        // Not here: `cancel` waits for the session's work queue, which may be waiting for this one.
        cancels.async { dataTask.cancel() }
        if let url = dataTask.currentRequest?.url?.absoluteString, let port = ConnectionWatch.port(of: url) { watch.breakFlood(fromPort: port) }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let key: Int? = state.withLock { state in
            state.abandoned.remove(task.taskIdentifier)
            return state.keyByTask.removeValue(forKey: task.taskIdentifier)
        }
        guard let key else { return }
        let http = task.response as? HTTPURLResponse
        apply(key) { attempt, _ in
            attempt.phase.taskEnded()
            if let http, attempt.core.awaitsHead { attempt.core.answerHead(URLSessionTransport.head(of: http)) }
            attempt.core.bodySent(totalBytes: attempt.progress?.bytes ?? 0)
            return attempt.core.transferEnded(
                status: http?.statusCode, error: error.map(TransferError.init(urlSessionError:)), bodyFailure: attempt.request.body.failure,
                now: Now.seconds, date: Now.date)
        }
    }

    /// Declines every redirect: the 3xx comes back to the attempt. A task already told to cancel
    /// is left unanswered (see the type's note).
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
            state.keyByTask[task.taskIdentifier].flatMap { state.attempts[$0] }.map { ($0.request.requestBody, $0.progress) }
        }
        guard let (body, progress) = found, let body else { return completionHandler(nil) }
        let reader = BodyReader(body, progress: progress, rate: rate, readHook: bodyReadHook)
        _ = reader.seek(to: 0)
        completionHandler(BodyInputStream(reader))
    }
}
