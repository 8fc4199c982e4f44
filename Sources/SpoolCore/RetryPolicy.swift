/// How many attempts an item gets and how long to wait between them.
///
/// Exponential backoff with "full jitter" (AWS architecture blog): the delay before attempt
/// `n + 1` is uniform in `[base * 2^(n-1) / 2, base * 2^(n-1)]`, capped by `maximumBackoff`.
/// Keeping half of the delay fixed means retries never bunch up at zero.
public struct RetryPolicy: Equatable, Sendable {
    public var maximumAttempts: Int
    public var baseDelaySeconds: Double
    public var maximumBackoffSeconds: Double

    public init(maximumAttempts: Int = 3, baseDelaySeconds: Double = 1, maximumBackoffSeconds: Double = 300) {
        precondition(maximumAttempts >= 1, "at least one attempt")
        self.maximumAttempts = maximumAttempts
        self.baseDelaySeconds = max(0, baseDelaySeconds)
        self.maximumBackoffSeconds = max(0, maximumBackoffSeconds)
    }

    /// Whether an item that has made `attemptsMade` attempts may make another.
    public func allowsAnotherAttempt(after attemptsMade: Int) -> Bool { attemptsMade < maximumAttempts }

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
