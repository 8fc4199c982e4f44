import Foundation
import SpoolCore
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads with one long-lived URLSession, streaming each blob from disk (`uploadTask(fromFile:)`).
///
/// - Deadline: on Linux, URLSession does not enforce `timeoutIntervalForResource`, so the overall
///   deadline of an attempt (all its redirect hops included) is ours: one sweeper timer, running
///   only while attempts are in flight, cancels the overdue ones (RELIABILITY rule 10). A timer
///   per request would hold its closure until it fired, long after the upload ended.
/// - Redirects: URLSession is never allowed to follow one itself (the delegate declines). The 3xx
///   comes back here and `RedirectPolicy` decides: a 307/308 to the same origin (or an allowed
///   host) is sent again as a fresh upload task of the same file, method and headers; anything
///   else ends the attempt with a final refusal.
/// - Multipart (`--form`): the body is assembled as a file in the spool's `tmp/` on a background
///   queue, uploaded like a blob, and removed when the attempt ends.
/// - Content-Digest (`--content-digest`): the body file (blob or multipart body) is hashed before
///   the first request, on a serial queue of its own, and the header kept for every redirect hop.
///   Serial on purpose: hashing is CPU-bound (about 5 ms per MiB), and blocks that hold a thread
///   for seconds on a concurrent queue starve Dispatch's small global pool, which the session's
///   delegate queue needs (the same stall was measured with hooks run as Dispatch blocks).
/// - Request headers are never logged (they may hold credentials from `--header-file`).
public final class URLSessionTransport: NSObject, UploadTransport, URLSessionTaskDelegate, @unchecked Sendable {
    /// Bytes of response body kept for the attempt history.
    public static let excerptLength = 512

    /// Blobs up to this size are sent from memory (at most `concurrency` × 4 MiB held at once).
    /// Two reasons, both measured on Linux (swift-corelibs-foundation 6.3.1, libcurl 7.88):
    /// - `uploadTask(fromFile:)` reads the file asynchronously and pauses libcurl's send while it
    ///   waits; when the server drops the connection in that window, the later unpause fails
    ///   (`curl_easy_pause` returns 43 since libcurl 7.69) and a `try!` in FoundationNetworking's
    ///   EasyHandle traps the whole process. A `Data` body never pauses.
    /// - `fromFile` also looks up the file owner's user and group names (nsswitch, /etc/passwd,
    ///   /etc/group) on every upload: small items go 1.6x faster from memory.
    /// Larger blobs stream from the file, so memory stays flat for big items.
    public static let inMemoryLimit: Int64 = 4 * 1024 * 1024

    /// The whole file if it has exactly `expected` bytes; nil otherwise (the file upload path
    /// then reports whatever is wrong with it).
    static func readSmall(_ path: String, expected: Int64) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Int(expected) + 1)
        var total = 0
        while total < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            total += n
        }
        guard total == Int(expected) else { return nil }
        return Data(bytes[0..<total])
    }

    /// One attempt of one item, across its redirect hops; mutated only under `attempts`' lock.
    private final class Attempt: @unchecked Sendable {
        let request: UploadRequest
        let completion: @Sendable (UploadOutcome) -> Void
        var bodyPath: String
        var contentType: String
        /// The `Content-Digest` value, computed once per attempt before the first request.
        var contentDigest: String?
        var task: URLSessionTask?
        var hops = 0
        var timedOut = false
        var cancelled = false
        let deadline: DispatchTime

        init(_ request: UploadRequest, deadline: DispatchTime, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            self.request = request
            self.deadline = deadline
            self.completion = completion
            self.bodyPath = request.blobPath
            self.contentType = request.contentType
        }
    }

    private var session: URLSession!
    private let deadlineSeconds: Double
    /// Bytes of each final answer passed on in the outcome for the engine's rules (0: none).
    private let answerLimit: Int
    private let redirects: RedirectPolicy
    private let timers = DispatchQueue(label: "spoold.transport.deadlines")
    private let sweeper: any DispatchSourceTimer
    /// Whether `sweeper` is resumed; changed only under `attempts`' lock.
    private let sweeping = Mutex(false)
    private let builders = DispatchQueue(label: "spoold.transport.multipart", attributes: .concurrent)
    private let digests = DispatchQueue(label: "spoold.transport.digests")
    /// Where uploads are started, in order: reading a small blob and making its task take the
    /// caller's time (the engine's loop) otherwise.
    private let starts = DispatchQueue(label: "spoold.transport.starts")
    private let attempts = Mutex<[Int: Attempt]>([:])
    private let nextKey = Mutex(0)

    /// - Parameters:
    ///   - concurrency: connections per host, matching the engine's uploads at once.
    ///   - deadlineSeconds: overall time one attempt may take, redirects included.
    ///   - idleSeconds: longest silence on the connection.
    ///   - redirects: which redirects are followed.
    ///   - answerLimit: bytes of each answer's body kept in the outcome (`--success-json`).
    public init(
        concurrency: Int, deadlineSeconds: Double, idleSeconds: Double, redirects: RedirectPolicy = RedirectPolicy(),
        answerLimit: Int = 0
    ) {
        self.deadlineSeconds = deadlineSeconds
        self.answerLimit = answerLimit
        self.redirects = redirects
        sweeper = DispatchSource.makeTimerSource(queue: timers)
        // Deadline precision: a quarter of the deadline, between 50 ms and 1 s.
        let interval = min(1.0, max(0.05, deadlineSeconds / 4))
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
        let queue = OperationQueue()
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
            completion(.refused("invalid upload URL '\(request.url)'"))
            return
        }
        let key = nextKey.withLock { key in
            key += 1
            return key
        }
        let attempt = Attempt(request, deadline: .now() + deadlineSeconds, completion: completion)
        attempts.withLock { all in
            all[key] = attempt
            setSweeping(true)
        }
        if let form = request.form, let formPath = request.formBodyPath {
            builders.async { [weak self] in
                guard let self else { return }
                let bodySize: Int64
                do {
                    bodySize = try MultipartBodyFile.build(form, blobPath: request.blobPath, expectedSize: request.size, at: formPath)
                } catch {
                    self.finish(key, .network("could not assemble the multipart body: \(error)"))
                    return
                }
                self.attempts.withLock { all in
                    all[key]?.bodyPath = formPath
                    all[key]?.contentType = form.headerValue
                }
                if let algorithm = request.contentDigest {
                    self.digests.async { self.digestThenSend(key, algorithm, bodyPath: formPath, size: bodySize, to: url) }
                } else {
                    self.send(key, to: url)
                }
            }
        } else if let algorithm = request.contentDigest {
            digests.async { [weak self] in
                self?.digestThenSend(key, algorithm, bodyPath: request.blobPath, size: request.size, to: url)
            }
        } else {
            starts.async { [weak self] in self?.send(key, to: url) }
        }
    }

    /// Hashes the body file, keeps the header value for the attempt, and sends it.
    private func digestThenSend(_ key: Int, _ algorithm: ContentDigest, bodyPath: String, size: Int64, to url: URL) {
        do {
            let value = algorithm.headerValue(digest: try FileDigest.sha256(of: bodyPath, expectedSize: size))
            attempts.withLock { all in all[key]?.contentDigest = value }
        } catch {
            finish(key, .network("could not compute the Content-Digest: \(error)"))
            return
        }
        send(key, to: url)
    }

    public func cancelAll() {
        let tasks = attempts.withLock { all in
            all.values.compactMap { attempt -> URLSessionTask? in
                attempt.cancelled = true
                return attempt.task
            }
        }
        for task in tasks { task.cancel() }
    }

    /// Starts (or, after a redirect, restarts) the attempt's upload task to `url`. The task is
    /// made outside `attempts`' lock: `uploadTask` waits for the session's own queue, and
    /// completions must not wait for that.
    private func send(_ key: Int, to url: URL) {
        enum Next {
            case gone, stop(UploadOutcome)
            case go(UploadRequest, bodyPath: String, contentType: String, contentDigest: String?)
        }
        let next: Next = attempts.withLock { all in
            guard let attempt = all[key] else { return .gone }
            if attempt.timedOut { return .stop(timeoutOutcome) }
            if attempt.cancelled { return .stop(.network("cancelled")) }
            return .go(attempt.request, bodyPath: attempt.bodyPath, contentType: attempt.contentType,
                       contentDigest: attempt.contentDigest)
        }
        guard case .go(let request, let bodyPath, let contentType, let contentDigest) = next else {
            if case .stop(let outcome) = next { finish(key, outcome) }
            return
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        // Without it, Foundation on Linux sends "spoold (unknown version)"; a --header wins.
        urlRequest.setValue(SpooldVersion.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.setValue(contentType, forHTTPHeaderField: "Content-Type")
        urlRequest.setValue(request.id.rawValue, forHTTPHeaderField: "Idempotency-Key")
        if let contentDigest { urlRequest.setValue(contentDigest, forHTTPHeaderField: ContentDigest.headerName) }
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { [weak self] data, response, error in
            self?.handle(key, url: url, data: data, response: response, error: error)
        }
        let task: URLSessionUploadTask
        if request.size <= URLSessionTransport.inMemoryLimit, request.form == nil,
           let body = URLSessionTransport.readSmall(bodyPath, expected: request.size) {
            task = session.uploadTask(with: urlRequest, from: body, completionHandler: handler)
        } else {
            task = session.uploadTask(with: urlRequest, fromFile: URL(fileURLWithPath: bodyPath), completionHandler: handler)
        }
        // Cancelled or overdue while the task was being made: it never starts.
        let stillWanted: Next = attempts.withLock { all in
            guard let attempt = all[key] else { return .gone }
            if attempt.timedOut { return .stop(timeoutOutcome) }
            if attempt.cancelled { return .stop(.network("cancelled")) }
            attempt.task = task
            return next
        }
        switch stillWanted {
        case .go: task.resume()
        case .gone: task.cancel()
        case .stop(let outcome):
            task.cancel()
            finish(key, outcome)
        }
    }

    private func handle(_ key: Int, url: URL, data: Data?, response: URLResponse?, error: Error?) {
        let state: (timedOut: Bool, hops: Int, method: String)? = attempts.withLock { all in
            guard let attempt = all[key] else { return nil }
            attempt.task = nil
            return (attempt.timedOut, attempt.hops, attempt.request.method)
        }
        guard let state else { return }
        if let http = response as? HTTPURLResponse, error == nil {
            let excerpt = URLSessionTransport.excerpt(data)
            let location = http.value(forHTTPHeaderField: "Location").flatMap {
                URL(string: $0, relativeTo: url)?.absoluteURL.absoluteString
            }
            switch redirects.decide(
                status: http.statusCode, method: state.method, from: url.absoluteString, location: location,
                hopsSoFar: state.hops)
            {
            case .follow(let target):
                guard let next = URL(string: target) else { break }
                attempts.withLock { $0[key]?.hops += 1 }
                send(key, to: next)
                return
            case .refuse(let reason):
                finish(key, .refused(reason, status: http.statusCode, excerpt: excerpt))
                return
            case .notARedirect:
                break
            }
            var outcome = UploadOutcome.status(http.statusCode, excerpt: excerpt)
            if answerLimit > 0 {
                let body = data ?? Data()
                outcome.responseBody = Array(body.prefix(answerLimit))
                outcome.responseBodyTruncated = body.count > answerLimit
            }
            if let value = http.value(forHTTPHeaderField: "Retry-After") {
                outcome.retryAfterSeconds = RetryAfter.seconds(from: value, now: Date())
            }
            finish(key, outcome)
            return
        }
        if state.timedOut {
            finish(key, timeoutOutcome)
            return
        }
        finish(key, URLSessionTransport.networkOutcome(error))
    }

    /// Cancels every attempt past its deadline; stops itself when nothing is in flight.
    private func sweep() {
        let now = DispatchTime.now()
        let overdue: [URLSessionTask] = attempts.withLock { all in
            if all.isEmpty { setSweeping(false) }
            return all.values.compactMap { attempt in
                guard !attempt.timedOut, attempt.deadline <= now else { return nil }
                attempt.timedOut = true
                return attempt.task
            }
        }
        for task in overdue { task.cancel() }
    }

    /// Resumes or suspends the sweeper, balanced; call under `attempts`' lock.
    private func setSweeping(_ on: Bool) {
        sweeping.withLock { running in
            guard running != on else { return }
            running = on
            if on { sweeper.resume() } else { sweeper.suspend() }
        }
    }

    /// Ends the attempt exactly once: forgets it, removes its multipart file, reports the outcome.
    private func finish(_ key: Int, _ outcome: UploadOutcome) {
        guard let attempt = attempts.withLock({ $0.removeValue(forKey: key) }) else { return }
        if let formPath = attempt.request.formBodyPath { unlink(formPath) }
        attempt.completion(outcome)
    }

    private var timeoutOutcome: UploadOutcome {
        .network("no complete answer within the \(URLSessionTransport.seconds(deadlineSeconds)) deadline (--timeout)")
    }

    /// Declines every redirect: the 3xx comes back to `handle`, which applies `RedirectPolicy`.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    static func networkOutcome(_ error: Error?) -> UploadOutcome {
        let nsError = error as NSError?
        let code = URLError.Code(rawValue: nsError?.code ?? URLError.unknown.rawValue) ?? .unknown
        let fallback = nsError?.localizedDescription ?? "unknown error"
        // libcurl's TLS failures reach us as code -1 with curl's text ("SSL certificate problem: ...").
        if code == .unknown, isTLSFailure(fallback) {
            return .network("TLS handshake failed: \(fallback)", beforeSending: true)
        }
        return .network(describe(code, fallback: fallback), beforeSending: isUnreachable(code))
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
