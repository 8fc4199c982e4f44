import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The requests of S3 multipart uploads (create, list, parts, complete, abort): one long-lived
/// URLSession with a delegate, so that, as in `URLSessionTransport`, bodies stream from the blob's
/// descriptor (`BodyInputStream`, a byte range per part) and answers are bounded.
///
/// - Answers: the delegate keeps the first `answerLimit` bytes (enough for a ListParts page of
///   `S3MultipartUpload.listPage` parts) and cancels a request whose answer goes on past
///   `answerCutBytes`; the delegate queue pushes back (`BoundedOperationQueue`).
/// - Deadline: each request has its own (`--timeout`), enforced here: URLSession on Linux does not.
/// - Redirects are declined: a 3xx ends the step like any answer that is not 2xx.
/// - Cancelling never happens on the delegate queue, and never for a task whose redirect was
///   answered (FoundationNetworking traps; see `URLSessionTransport`).
final class S3RequestSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct Answer: Sendable {
        var status: Int
        var etag: String?
        /// The first `answerLimit` bytes of the answer.
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// What ended a request that got no whole answer.
    enum Failure: Error {
        case network(any Error)
        case timedOut
        case cancelled
    }

    typealias Completion = @Sendable (Result<Answer, Failure>) -> Void

    static let answerLimit = 256 * 1024
    static let answerCutBytes: Int64 = 1 << 20

    private final class Pending: @unchecked Sendable {
        let body: (@Sendable () -> InputStream)?
        let completion: Completion
        /// Held until the request reports, so `cancel` can reach it.
        var task: URLSessionTask?
        var data = Data()
        var received: Int64 = 0
        var timedOut = false
        var cancelled = false
        var cancelIssued = false
        var redirectAnswered = false

        init(body: (@Sendable () -> InputStream)?, completion: @escaping Completion) {
            (self.body, self.completion) = (body, completion)
        }
    }

    private let pending = Mutex<[Int: Pending]>([:])
    private let timers = DispatchQueue(label: "spoold.transport.s3-requests")
    private var session: URLSession!

    init(concurrency: Int, deadlineSeconds: Double, idleSeconds: Double) {
        super.init()
        session = URLSessionTransport.makeSession(
            concurrency: concurrency, deadlineSeconds: deadlineSeconds, idleSeconds: idleSeconds, delegate: self)
    }

    /// Sends `request` with `body` (a fresh stream each time libcurl asks) of `length` bytes, and
    /// reports its answer once. Returns a handle for `cancel`.
    @discardableResult
    func send(
        _ request: URLRequest, body: (@Sendable () -> InputStream)?, length: Int64, deadlineSeconds: Double,
        completion: @escaping Completion
    ) -> Int {
        var request = request
        if let body {
            request.setValue(String(length), forHTTPHeaderField: "Content-Length")
            // A stream would go chunked; a blank Transfer-Encoding stops libcurl choosing that.
            request.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
            request.httpBodyStream = body()
        }
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        let entry = Pending(body: body, completion: completion)
        entry.task = task
        pending.withLock { $0[id] = entry }
        timers.asyncAfter(deadline: .now() + deadlineSeconds) { [weak self, weak task] in
            guard let self, let task else { return }
            self.stop(task, timedOut: true)
        }
        task.resume()
        return id
    }

    /// Cancels the request `handle`; it still reports, as `.cancelled`. Not on the delegate queue.
    func cancel(_ handle: Int) {
        guard let task = pending.withLock({ $0[handle]?.task }) else { return }
        stop(task, timedOut: false)
    }

    private func stop(_ task: URLSessionTask, timedOut: Bool) {
        let go: Bool = pending.withLock { all in
            guard let p = all[task.taskIdentifier], !p.cancelIssued, !p.redirectAnswered else { return false }
            p.cancelIssued = true
            if timedOut { p.timedOut = true } else { p.cancelled = true }
            return true
        }
        if go { task.cancel() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let cut: Bool = pending.withLock { all in
            guard let p = all[dataTask.taskIdentifier] else { return false }
            let room = S3RequestSession.answerLimit - p.data.count
            if room > 0 { p.data.append(data.prefix(room)) }
            p.received += Int64(data.count)
            guard p.received > S3RequestSession.answerCutBytes, !p.cancelIssued, !p.redirectAnswered else { return false }
            p.cancelIssued = true
            p.timedOut = true
            return true
        }
        if cut { timers.async { dataTask.cancel() } }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let p = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        p.task = nil
        if let http = task.response as? HTTPURLResponse, error == nil {
            p.completion(.success(Answer(status: http.statusCode, etag: http.value(forHTTPHeaderField: "ETag"), body: p.data)))
        } else if p.timedOut {
            p.completion(.failure(.timedOut))
        } else if p.cancelled {
            p.completion(.failure(.cancelled))
        } else {
            p.completion(.failure(.network(error ?? URLError(.unknown))))
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let answer: Bool = pending.withLock { all in
            guard let p = all[task.taskIdentifier], !p.cancelIssued else { return false }
            p.redirectAnswered = true
            return true
        }
        if answer { completionHandler(nil) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        completionHandler(pending.withLock { $0[task.taskIdentifier]?.body?() })
    }
}
