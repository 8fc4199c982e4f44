/// Why a `SpoolClient` call did nothing, or not everything: the cases mean what `spoold enqueue`'s
/// exit codes mean, and `exitCode` is that code.
public enum SpoolClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was asked is wrong (a header that cannot be sent, an empty content type); nothing was
    /// done. Exit code 2.
    case invalidArgument(String)
    /// The spool could not be used, or a write could not be made durable (an I/O error, a failed
    /// fsync, a file system that is full: `outOfSpace`); nothing of the call was acknowledged.
    /// Exit code 3.
    case spoolUnusable(String, outOfSpace: Bool)
    /// `enqueue(file:)`: the file was not added (missing, not a regular file); the spool is fine.
    /// Exit code 1.
    case fileSkipped(file: String, reason: String)
    /// `EnqueueOptions.maximumSpoolBytes` is reached: the file was not added; try again later.
    /// Exit code 75 (EX_TEMPFAIL).
    case spoolFull(limitBytes: Int64)

    /// `spoold enqueue`'s exit code for the same outcome.
    public var exitCode: Int32 {
        switch self {
        case .invalidArgument: 2
        case .spoolUnusable: 3
        case .fileSkipped: 1
        case .spoolFull: 75
        }
    }

    public var description: String {
        switch self {
        case .invalidArgument(let message): message
        case .spoolUnusable(let message, _): message
        case .fileSkipped(_, let reason): "skipped \(reason)"
        case .spoolFull(let limit): "the spool is full (\(limit) B queued at most); try again later"
        }
    }
}
