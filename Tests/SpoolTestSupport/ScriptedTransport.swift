import Foundation
import SpoolCore
import SpoolTransport

/// An upload transport whose requests wait until the test answers them, or are each answered at
/// once with `autoAnswer`. It notes when each request started and each cancel came, by `clock`.
public final class ScriptedTransport: UploadTransport, @unchecked Sendable {
    /// A request the engine started, and when.
    public struct Started: Sendable {
        public var request: UploadRequest
        public var at: Timestamp
    }

    private struct Waiting {
        var request: UploadRequest
        var completion: @Sendable (UploadOutcome) -> Void
    }

    private let lock = NSLock()
    private let clock: any Clock
    private var log: [Started] = []
    private var waiting: [Waiting] = []
    private var cancels: [Timestamp] = []
    private var answer: UploadOutcome?
    private var starting: (@Sendable (UploadRequest) -> Void)?

    public init(clock: any Clock) { self.clock = clock }

    /// Every request so far, in start order.
    public var started: [Started] { lock.withLock { log } }
    /// When the start of each request came, relative to `origin`, in seconds.
    public func startTimes(since origin: Timestamp) -> [Double] { started.map { origin.seconds(until: $0.at) } }
    /// Requests started and not answered yet.
    public var inFlight: Int { lock.withLock { waiting.count } }
    /// When `cancelAll` was called.
    public var cancelTimes: [Timestamp] { lock.withLock { cancels } }

    /// When set, every new request gets this outcome at once (inside `start`).
    public var autoAnswer: UploadOutcome? {
        get { lock.withLock { answer } }
        set { lock.withLock { answer = newValue } }
    }

    /// Called with each request as it starts, before anything else (on the engine's thread).
    public var onStart: (@Sendable (UploadRequest) -> Void)? {
        get { lock.withLock { starting } }
        set { lock.withLock { starting = newValue } }
    }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        onStart?(request)
        let now = clock.now()
        let scripted: UploadOutcome? = lock.withLock {
            log.append(Started(request: request, at: now))
            if answer == nil { waiting.append(Waiting(request: request, completion: completion)) }
            return answer
        }
        if let scripted {
            if request.ownsBody { request.body.close() }
            completion(scripted)
        }
    }

    /// An abort is one more request (`DELETE <url>?uploadId=<id>`), scripted like the others.
    public func abortUpload(_ abort: OwedAbort, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        let request = UploadRequest(
            id: abort.id, attempt: 0, url: abort.url + "?uploadId=" + abort.uploadID, method: "DELETE", body: .none,
            contentType: "application/xml", headers: [:])
        start(request, completion: completion)
    }

    /// `answerNext` found no request waiting.
    public struct NothingWaiting: Error {}

    /// Answers the oldest waiting request.
    public func answerNext(_ outcome: UploadOutcome) throws {
        guard let next = lock.withLock({ waiting.isEmpty ? nil : waiting.removeFirst() }) else { throw NothingWaiting() }
        // The parts of an S3 upload share the blob, which their attempt closes once.
        if next.request.ownsBody { next.request.body.close() }
        next.completion(outcome)
    }

    /// Answers every waiting request as cancelled, as the real transports do.
    public func cancelAll() {
        let now = clock.now()
        let all = lock.withLock {
            cancels.append(now)
            defer { waiting.removeAll() }
            return waiting
        }
        for request in all {
            if request.request.ownsBody { request.request.body.close() }
            request.completion(.cancelled)
        }
    }
}
