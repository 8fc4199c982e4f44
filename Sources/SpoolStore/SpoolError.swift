import SpoolSystem

/// Spool-level errors an operator can act on.
public enum SpoolError: Error, Equatable, Sendable, CustomStringConvertible {
    case noSpool(String)
    /// The spool folder could not be made (its parent is missing, read-only, not ours).
    case cannotCreate(path: String, reason: String)
    /// The spool is there but cannot be written (a read-only mount, another user's folder).
    case notWritable(path: String, cause: String)
    case notAFolder(String)
    case alreadyRunning(path: String, pid: String)
    case noSuchItem(String)
    case ambiguousItem(String, Int)
    /// The spool's file system is full (ENOSPC, EDQUOT) and nothing of the add was kept: no file
    /// staged, no record written, every source where it was.
    case outOfSpace(path: String, cause: SystemError)
    /// An upload's progress (an S3 part log) could not be made durable: the daemon stops without
    /// acknowledging the item, and start-up recovery resumes it from what was recorded.
    case progressNotRecorded(item: String, cause: String)

    public var description: String {
        switch self {
        case .noSpool(let path): "no spool at \(path) (check --spool or SPOOLD_SPOOL; 'spoold run', 'drain' and 'enqueue' create one, this command does not)"
        case .cannotCreate(let path, let reason): "cannot create the spool \(path): \(reason)"
        case .notWritable(let path, let cause):
            "cannot write to \(path): \(cause); check that its file system is mounted read-write and that this user may write there"
        case .notAFolder(let path): "\(path) is not a folder (it may be a symbolic link); fix the spool layout by hand"
        case .alreadyRunning(let path, let pid):
            "another spoold (pid \(pid)) is already working on \(path); stop it first, or use another --spool"
        case .noSuchItem(let id): "no item '\(id)' in the spool (see 'spoold ls')"
        case .ambiguousItem(let prefix, let count): "'\(prefix)' matches \(count) items; give more of the id"
        case .outOfSpace(let path, let cause):
            "the file system of the spool \(path) is full (\(cause)); nothing was added: free some space and try again"
        case .progressNotRecorded(let item, let cause):
            "\(cause); stopped without acknowledging \(item): the next start returns it to pending/ and resumes it from what its part log recorded"
        }
    }
}
