import CCurl
import Dispatch
import Glibc
import SpoolCore
import SpoolTransport
import Synchronization

/// Uploads with libcurl's multi interface (`--transport curl`), on one thread of its own
/// (`CurlMultiLoop`): another driver of `HTTPAttempt`, so every rule (headers, redirects, the
/// answer's cut, the deadline across hops, the outcome) is the one URLSession follows. What only
/// libcurl offers is in `CurlOptions` (a private CA, a client certificate, HTTP/2); its own timers
/// enforce the idle timeout and each hop's share of the deadline; the body is hashed (and a
/// compressed one measured) here, off its thread.
public final class CurlTransport: UploadTransport {
    private let loop: CurlMultiLoop
    private let deadlineSeconds: Double
    private let redirects: RedirectPolicy
    private let answerLimit: Int
    private let digests = DispatchQueue(label: "spoold.curl.digests")
    /// Counts `cancelAll` calls: an attempt still being hashed when one came is cancelled too.
    private let cancellations = Mutex(0)

    /// - Parameters:
    ///   - deadlineSeconds: overall time one attempt may take, redirects included.
    ///   - idleSeconds: longest silence (connect, or under one byte a second).
    ///   - answerLimit: bytes of each answer's body kept in the outcome (`--success-json`).
    ///   - connections: requests the engine has in flight at most: idle connections kept for reuse.
    ///   - rate: `--limit-rate`, shared with every other transport of the daemon.
    public init(
        deadlineSeconds: Double, idleSeconds: Double, redirects: RedirectPolicy = RedirectPolicy(),
        answerLimit: Int = 0, connections: Int, options: CurlOptions = CurlOptions(), rate: BodyRateGate? = nil
    ) {
        (self.deadlineSeconds, self.redirects, self.answerLimit) = (deadlineSeconds, redirects, answerLimit)
        loop = CurlMultiLoop(idleSeconds: idleSeconds, connections: connections, options: options, rate: rate)
    }

    deinit { loop.stop() }

    public func shutdown() { loop.stopAndWait(seconds: 5) }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        // The blob was opened and checked by the engine (O_NOFOLLOW, fstat): `request.body`.
        var core = HTTPAttempt(request.attempt(deadlineSeconds: deadlineSeconds, redirects: redirects, answerLimit: answerLimit), now: Now.seconds)
        let first = core.start()
        let transfer = CurlTransfer(request, core: core, completion: completion)
        switch first {
        case .finish(let outcome):
            transfer.finish(outcome)
        case .prepareBody:
            // Hashing and compressing are CPU-bound: never on the transfers' thread.
            let generation = cancellations.withLock { $0 }
            digests.async { [self] in
                let action: HTTPAttempt.Action
                do {
                    let (prepared, digest) = try request.prepared()
                    transfer.request = prepared
                    action = transfer.core.bodyPrepared(contentDigest: digest)
                } catch {
                    action = transfer.core.bodyUnprepared("\(error)")
                }
                if case .finish(let outcome) = action { return transfer.finish(outcome) }
                // Under the lock cancelAll takes: a cancel lands wholly before or after the submit.
                let cancelled = cancellations.withLock { count in
                    guard count == generation else { return true }
                    submit(transfer)
                    return false
                }
                if cancelled { transfer.finish(.cancelled) }
            }
        case .send, .none, .stopReading:
            submit(transfer)
        }
    }

    private func submit(_ transfer: CurlTransfer) {
        loop.submit(transfer)
        // Weak: the request (inside the transfer) holds the cancellation that holds this.
        transfer.request.cancellation?.whenCancelled { [weak loop, weak transfer] in
            if let loop, let transfer { loop.cancel(transfer) }
        }
    }

    public func cancelAll() {
        cancellations.withLock { count in
            count += 1
            loop.cancelAll()
        }
    }
}
