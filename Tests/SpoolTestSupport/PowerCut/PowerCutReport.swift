/// A state that breaks a promise.
public struct PowerCutViolation: CustomStringConvertible, Sendable {
    public var workload: String
    /// Where the power went, and what was kept.
    public var state: String
    public var problems: [String]
    /// The spool's files in that state, before recovery.
    public var listing: String

    public var description: String {
        "\(workload): \(state)\n  " + problems.joined(separator: "\n  ") + "\n  files before recovery:\n    "
            + listing.split(separator: "\n").joined(separator: "\n    ")
    }
}

/// What exploring one workload found.
public struct PowerCutReport: Sendable {
    public var workload: String
    public var traceLength = 0
    public var crashPoints = 0
    /// Crash points with more states than the budget (sampled there).
    public var boundedCrashPoints = 0
    /// States tried (choices of what the cut kept), and how many distinct spools they made.
    public var choices = 0
    public var states = 0
    /// Crash states whose recovery was cut, and the distinct states those cuts left.
    public var recoveryCuts = 0
    public var recoveryCutStates = 0
    public var violations: [PowerCutViolation] = []
    public var durabilityCalls: [SyncKey: Int] = [:]
    public var seconds = 0.0

    public var summary: String {
        "\(workload): \(states) states (\(choices) tried at \(crashPoints) crash points, \(boundedCrashPoints) sampled), "
            + "recovery cut in \(recoveryCuts): \(recoveryCutStates) states; \(violations.count) violation(s); "
            + String(format: "%.1f s", seconds)
    }
}
