import Glibc
import Synchronization

/// The process's limit on open descriptors (`RLIMIT_NOFILE`). Its soft value is often 1024 (a
/// systemd service's default), while the hard one allows far more; spoold raises the soft limit
/// to the hard one (at most 1,048,576) at start, as Go's runtime does, so a burst of connections,
/// folders and blobs cannot stop the daemon with EMFILE. Children get the old limit back, as Go's
/// `os/exec` gives it (`childPrologue`): a hook that closes every descriptor up to its limit, or
/// uses `select(2)`, must not pay for spoold's.
public enum OpenFileLimit {
    /// The soft limit before `raiseToHardLimit` raised it; nil when it was left as it was.
    private static let raisedFrom = Mutex<UInt64?>(nil)

    /// Raises the soft limit (left as it is if that is refused: `current` tells).
    public static func raiseToHardLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 1 << 20)
        guard limit.rlim_cur < wanted else { return }
        let before = limit.rlim_cur
        limit.rlim_cur = wanted
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { raisedFrom.withLock { $0 = UInt64(before) } }
    }

    /// The soft limit in force (nil if it cannot be read).
    public static var current: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// Shell text that puts the soft limit back to what it was before spoold raised it (empty
    /// when it did not), run first in a child's `sh -c`: `posix_spawn` cannot set a limit.
    static var childPrologue: String {
        raisedFrom.withLock { $0 }.map { "ulimit -S -n \($0) 2>/dev/null; " } ?? ""
    }
}
