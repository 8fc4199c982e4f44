import ArgumentKit
import SpoolCore

/// The retry budgets and the backoff, declared once with `RetryPolicy`'s defaults: `run` and
/// `drain` have all four; `check --repair` has the two budgets, which decide there whether an
/// interrupted upload is retried, and says so in its help.
enum RetryOptions {
    static let attempts = 1...100
    static let interrupted = 1...1000

    static let maximumAttempts = DefaultedOption.integer(
        "max-attempts",
        help: "Answered attempts per item (the server or the network said something) before it is parked in failed/ (\(attempts.lowerBound)-\(attempts.upperBound)).",
        range: attempts, default: RetryPolicy.defaultMaximumAttempts)
    static let maximumInterrupted = DefaultedOption.integer(
        "max-interrupted",
        help: "Interrupted attempts per item (spoold was killed or crashed during the upload, so no outcome was recorded) before start-up recovery parks it in failed/ (\(interrupted.lowerBound)-\(interrupted.upperBound)). See docs/guarantees.md 'Crash safety'.",
        range: interrupted, default: RetryPolicy.defaultMaximumInterruptedAttempts)
    static let retryBase = DefaultedOption.seconds(
        "retry-base", help: "Backoff before the second attempt; doubles after each failure, with jitter.",
        range: 0...86_400, default: RetryPolicy.defaultBaseDelaySeconds)
    static let maximumBackoff = DefaultedOption.seconds(
        "max-backoff", help: "Longest wait between attempts (also caps Retry-After).",
        range: 0...604_800, default: RetryPolicy.defaultMaximumBackoffSeconds)

    /// `run` and `drain`.
    static let specs = [maximumAttempts.spec, maximumInterrupted.spec, retryBase.spec, maximumBackoff.spec]

    /// `check`: the daemon's budgets, for `--repair`.
    static let budgetSpecsForRepair = [
        maximumAttempts.withHelp(
            "With --repair: the daemon's --max-attempts, deciding whether an interrupted upload is retried.").spec,
        maximumInterrupted.withHelp(
            "With --repair: the daemon's --max-interrupted, deciding whether an interrupted upload is retried.").spec,
    ]

    /// The policy `run` and `drain` give.
    static func policy(_ arguments: ParsedArguments) throws -> RetryPolicy {
        RetryPolicy(
            maximumAttempts: try maximumAttempts.value(in: arguments),
            maximumInterruptedAttempts: try maximumInterrupted.value(in: arguments),
            baseDelaySeconds: try retryBase.value(in: arguments), maximumBackoffSeconds: try maximumBackoff.value(in: arguments))
    }
}
