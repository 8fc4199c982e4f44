/// A failed system call: which call, on which path, and its typed errno, phrased for an operator.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public var call: SystemCall
    public var path: String
    public var errno: Errno

    public init(_ call: SystemCall, path: String, errno: Errno) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    /// The error of `call`, which just failed: its errno is the calling thread's.
    public static func last(_ call: SystemCall, path: String) -> SystemError {
        SystemError(call, path: path, errno: .current)
    }

    public var description: String { "\(call) \(path): \(errno)" }

    public var isNotFound: Bool { errno == .noSuchFileOrDirectory }
    public var isOutOfSpace: Bool { errno == .noSpace || errno == .diskQuotaExceeded }
    /// A failed fsync or syncfs: final whatever its errno (fsyncgate), never a full disk to wait out.
    public var isSyncFailure: Bool { call == .fsync || call == .syncfs }
}

/// The name of a system call, as an error reports it (`fsync`, `open`). An open set, like
/// `Errno`: a test's file system may fail a call of its own.
public struct SystemCall: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    public static let open: SystemCall = "open"
    public static let close: SystemCall = "close"
    public static let read: SystemCall = "read"
    public static let pread: SystemCall = "pread"
    public static let write: SystemCall = "write"
    public static let fsync: SystemCall = "fsync"
    public static let syncfs: SystemCall = "syncfs"
    public static let rename: SystemCall = "rename"
    public static let unlink: SystemCall = "unlink"
    public static let mkdir: SystemCall = "mkdir"
    public static let fstat: SystemCall = "fstat"
    public static let stat: SystemCall = "stat"
    public static let opendir: SystemCall = "opendir"
    public static let readdir: SystemCall = "readdir"
    public static let fsetxattr: SystemCall = "fsetxattr"
    public static let fgetxattr: SystemCall = "fgetxattr"
    public static let futimens: SystemCall = "futimens"
    public static let flock: SystemCall = "flock"
    public static let ftruncate: SystemCall = "ftruncate"
    public static let fallocate: SystemCall = "fallocate"
    public static let lseek: SystemCall = "lseek"
    public static let pipe: SystemCall = "pipe"
    public static let posixSpawn: SystemCall = "posix_spawn"
    public static let inotifyInit: SystemCall = "inotify_init1"
    public static let inotifyAddWatch: SystemCall = "inotify_add_watch"
    public static let signalfd: SystemCall = "signalfd"
    public static let forbidCoreDumps: SystemCall = "prctl(PR_SET_DUMPABLE)"
    public static let setCloseOnExec: SystemCall = "fcntl(F_SETFD)"
    public static let execve: SystemCall = "execve"
    public static let memfdCreate: SystemCall = "memfd_create"
    public static let kill: SystemCall = "kill"
}
