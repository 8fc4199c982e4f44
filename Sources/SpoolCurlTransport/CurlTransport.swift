import CCurl
import Dispatch
import Glibc
import SpoolCore
import SpoolTransport
import Synchronization

/// Uploads with libcurl's multi interface (`--transport curl`), on one thread of its own.
///
/// The same contract as `URLSessionTransport`: one outcome per request with the same classes, an
/// overall deadline per attempt (redirect hops included), an idle timeout, redirects decided by
/// `RedirectPolicy` (libcurl never follows one itself), `Retry-After`, a bounded answer.
/// Different underneath: the body streams from a descriptor (multipart framing included) with no
/// copy, libcurl's own CPU cost, `CurlOptions` (a private CA, HTTP/2), and a shared bandwidth limit.
public final class CurlTransport: UploadTransport {
    private let loop: CurlMultiLoop
    private let digests = DispatchQueue(label: "spoold.curl.digests")
    /// Counts `cancelAll` calls: an attempt still being hashed when one came is cancelled too.
    private let cancellations = Mutex(0)

    /// - Parameters:
    ///   - deadlineSeconds: overall time one attempt may take, redirects included.
    ///   - idleSeconds: longest silence (connect, or under one byte a second).
    ///   - answerLimit: bytes of each answer's body kept in the outcome (`--success-json`).
    ///   - connections: requests the engine has in flight at most: idle connections kept for reuse.
    ///   - limitRate: `--limit-rate`, the bytes per second in force for the whole daemon.
    public init(
        deadlineSeconds: Double, idleSeconds: Double, redirects: RedirectPolicy = RedirectPolicy(),
        answerLimit: Int = 0, connections: Int = 4, options: CurlOptions = CurlOptions(), limitRate: SendRate? = nil
    ) {
        loop = CurlMultiLoop(
            deadlineSeconds: deadlineSeconds, idleSeconds: idleSeconds, redirects: redirects,
            keep: max(CurlMultiLoop.excerptLength, answerLimit), answerLimit: answerLimit, connections: connections,
            options: options, limitRate: limitRate)
    }

    deinit { loop.stop() }

    public func shutdown() { loop.stopAndWait(seconds: 5) }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        guard HTTPOrigin(request.url) != nil else {
            completion(.refusal(.urlRefused, "invalid upload URL '\(request.url)'"))
            return
        }
        // The blob was opened and checked by the engine (O_NOFOLLOW, fstat): `request.body`.
        let seconds = min(loop.deadlineSeconds, request.deadlineSeconds ?? loop.deadlineSeconds)
        let transfer = CurlTransfer(
            request, deadline: .now() + seconds, keep: max(loop.keep, request.answerKeep), completion: completion)
        guard let algorithm = request.contentDigest else {
            loop.submit(transfer)
            // Weak: the request (inside the transfer) holds the cancellation that holds this.
            request.cancellation?.whenCancelled { [weak loop, weak transfer] in
                if let loop, let transfer { loop.cancel(transfer) }
            }
            return
        }
        // Hashing is CPU-bound: never on the transfers' thread.
        let generation = cancellations.withLock { $0 }
        digests.async { [self] in
            do {
                transfer.contentDigest = algorithm.headerValue(digest: try request.bodySHA256())
            } catch {
                completion(.failed(.bodyUnhashable("compute the Content-Digest", "\(error)")))
                return
            }
            // Under the lock cancelAll takes: a cancel lands wholly before or after the submit.
            let cancelled = self.cancellations.withLock { count in
                guard count == generation else { return true }
                loop.submit(transfer)
                return false
            }
            if cancelled { completion(.cancelled) }
        }
    }

    public func cancelAll() {
        cancellations.withLock { count in
            count += 1
            loop.cancelAll()
        }
    }
}
