/// What one `run` or `drain` did, for the exit code and the last log line.
public struct RunSummary: Equatable, Sendable {
    /// Why the loop ended before it ran out of work.
    public enum Stop: Equatable, Sendable {
        /// SIGTERM or SIGINT (`requestStop`).
        case requested
        /// `drain --max-time` was reached.
        case timeLimit
        /// `--recycle-after` requests were made: the loop wound down (uploads in flight finished
        /// or were handed back, everything committed) so the process can re-execute itself.
        case recycle
    }

    public var ingested = 0
    public var uploaded = 0
    public var failed = 0
    /// Failed attempts that will be tried again.
    public var retried = 0
    public var repaired = 0
    /// Set when the run was stopped; nil when `drain` ended because nothing was left.
    public var stop: Stop?

    public init() {}

    public var line: String {
        "\(ingested) ingested, \(uploaded) uploaded, \(failed) moved to failed/, \(retried) attempts to retry, \(repaired) repaired at start"
    }
}
