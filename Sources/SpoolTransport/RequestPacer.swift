import Dispatch
import SpoolCore
import Synchronization

/// The daemon's one request rate (`AdaptiveRequestRate`), shared by the engine, which starts
/// items, and the multipart uploads, which start their parts on the transport's queue: every
/// request takes a token from it and every answer is told to it. Times are the caller's, so the
/// engine under a manual clock drives it alike.
public final class RequestPacer: Sendable {
    private let rate: Mutex<AdaptiveRequestRate>

    public init(settings: AdaptiveRequestRate.Settings = AdaptiveRequestRate.Settings()) {
        rate = Mutex(AdaptiveRequestRate(settings: settings))
    }

    /// Takes a token if a request may start at `now` (see `AdaptiveRequestRate.take`).
    public func take(now: Timestamp) -> Bool { rate.withLock { $0.take(now: now) } }

    /// Returns a token taken for a request that was not sent after all.
    public func giveBack(now: Timestamp) { rate.withLock { $0.giveBack(now: now) } }

    /// When `take` can next grant a token (`now` when it can now).
    public func nextStart(now: Timestamp) -> Timestamp { rate.withLock { $0.nextStart(now: now) } }

    /// Tells the rate how a request started at `startedAt` was answered; `outcome` is judged
    /// (its class final). `unitRandom` is drawn only for a throttled answer (a cut's jitter).
    @discardableResult
    public func answered(_ outcome: UploadOutcome, startedAt: Timestamp, now: Timestamp, unitRandom: @autoclosure () -> Double)
        -> AdaptiveRequestRate.Change
    {
        let answer: AdaptiveRequestRate.Answer
        switch outcome.class {
        case .success: answer = .accepted
        case .throttled: answer = .throttled(reason: outcome.summary)
        case .retryable, .final, .outage, .configuration: answer = .other
        }
        let random = answer == .accepted || answer == .other ? 0 : unitRandom()
        return rate.withLock {
            $0.answered(answer, startedAt: startedAt, now: now, retryAfterSeconds: outcome.retryAfterSeconds, unitRandom: random)
        }
    }

    /// The rate as of `now`, a limit unused for long enough lifted first.
    public func current(now: Timestamp) -> AdaptiveRequestRate {
        rate.withLock {
            _ = $0.settle(now: now)
            return $0
        }
    }

    /// Whether requests are limited now (cheap: no settling).
    public var isLimited: Bool { rate.withLock { $0.limit != nil } }

    /// When a limit in force will be lifted as unused (see `AdaptiveRequestRate.liftDue`).
    public var liftDue: Timestamp? { rate.withLock { $0.liftDue } }

    /// Runs `body` on `queue` once a token is taken: at once when one is there, else when the
    /// next is due (Dispatch's timer; `clock` gives the times). `body` gets the time it started.
    func whenAllowed(on queue: DispatchQueue, clock: any Clock, _ body: @escaping @Sendable (Timestamp) -> Void) {
        let now = clock.now()
        if take(now: now) {
            body(now)
            return
        }
        let wait = max(1, nextStart(now: now).millisecondsSinceEpoch - now.millisecondsSinceEpoch)
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(wait))) { [self] in
            whenAllowed(on: queue, clock: clock, body)
        }
    }
}
