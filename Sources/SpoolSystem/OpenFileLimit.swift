import Glibc

/// The process's limit on open descriptors (`RLIMIT_NOFILE`). Its soft value is often 1024 (a
/// systemd service's default), while the hard one allows far more; spoold raises the soft limit
/// to the hard one (at most 1,048,576) at start, as Go's runtime does, so a burst of connections,
/// folders and blobs cannot stop the daemon with EMFILE.
public enum OpenFileLimit {
    /// Raises the soft limit (left as it is if that is refused: `current` tells).
    public static func raiseToHardLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 1 << 20)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = wanted
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The soft limit in force (nil if it cannot be read).
    public static var current: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }
}
