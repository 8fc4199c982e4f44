/// How many attempts an item gets and how long to wait between them.
///
/// Exponential backoff with "full jitter" (AWS architecture blog): the delay before attempt
/// `n + 1` is uniform in `[base * 2^(n-1) / 2, base * 2^(n-1)]`, capped by `maximumBackoff`.
/// Keeping half of the delay fixed means retries never bunch up at zero.
///
/// Two budgets: answered attempts (the server or the network said something) and interrupted ones
/// (spoold stopped mid-upload). A crash says nothing about the item, so it gets the larger budget;
/// an item that crashes spoold every time still ends in failed/ once that budget is used.
public struct RetryPolicy: Equatable, Sendable {
    /// Answered attempts before the item is parked (`--max-attempts`).
    public var maximumAttempts: Int
    /// Interrupted attempts before the item is parked (`--max-interrupted`).
    public var maximumInterruptedAttempts: Int
    public var baseDelaySeconds: Double
    public var maximumBackoffSeconds: Double

    /// The defaults, here alone (`--max-attempts`, `--max-interrupted`, `--retry-base`,
    /// `--max-backoff` show and use these).
    public static let defaultMaximumAttempts = 3
    public static let defaultMaximumInterruptedAttempts = 10
    public static let defaultBaseDelaySeconds = 1.0
    public static let defaultMaximumBackoffSeconds = 300.0

    public init(
        maximumAttempts: Int = RetryPolicy.defaultMaximumAttempts,
        maximumInterruptedAttempts: Int = RetryPolicy.defaultMaximumInterruptedAttempts,
        baseDelaySeconds: Double = RetryPolicy.defaultBaseDelaySeconds,
        maximumBackoffSeconds: Double = RetryPolicy.defaultMaximumBackoffSeconds
    ) {
        precondition(maximumAttempts >= 1 && maximumInterruptedAttempts >= 1, "at least one attempt")
        self.maximumAttempts = maximumAttempts
        self.maximumInterruptedAttempts = maximumInterruptedAttempts
        self.baseDelaySeconds = max(0, baseDelaySeconds)
        self.maximumBackoffSeconds = max(0, maximumBackoffSeconds)
    }

    /// Whether an item whose attempts ended this way may make another: both budgets have room.
    public func allowsAnotherAttempt(after tally: AttemptTally) -> Bool {
        exhaustedBudget(tally) == nil
    }

    /// Which budget `tally` has used up, in words for a failure reason; nil while both have room.
    public func exhaustedBudget(_ tally: AttemptTally) -> String? {
        if tally.answered >= maximumAttempts {
            return "\(tally.answered) of \(maximumAttempts) answered attempts used"
        }
        if tally.interrupted >= maximumInterruptedAttempts {
            return "spoold stopped mid-upload \(tally.interrupted) times (at most \(maximumInterruptedAttempts))"
        }
        return nil
    }

    /// Delay after the `attemptsMade`-th failed attempt.
    /// - Parameters:
    ///   - unitRandom: a value in `[0, 1)` (injected so tests are deterministic).
    ///   - retryAfterSeconds: the server's `Retry-After`, which replaces the computed delay.
    public func delaySeconds(afterAttempt attemptsMade: Int, unitRandom: Double, retryAfterSeconds: Double? = nil)
        -> Double
    {
        if let retryAfter = retryAfterSeconds { return min(max(0, retryAfter), maximumBackoffSeconds) }
        let exponent = min(max(attemptsMade - 1, 0), 40)
        let ceiling = min(baseDelaySeconds * Double(1 << exponent), maximumBackoffSeconds)
        let r = min(max(unitRandom, 0), 1)
        return ceiling / 2 + ceiling / 2 * r
    }
}
