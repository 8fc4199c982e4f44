import Glibc

/// The process's limit on open descriptors (`RLIMIT_NOFILE`). Its soft value is often 1024 (a
/// systemd service's default), while the hard one allows far more; spoold raises the soft limit
/// to the hard one (at most 1,048,576) at start, as Go's runtime does, so a burst of connections,
/// folders and blobs cannot stop the daemon with EMFILE.
public enum OpenFileLimit {
    /// Raises the soft limit; returns the limit now in force (nil if it cannot be read).
    @discardableResult
    public static func raiseToHardLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let wanted = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }

    /// The soft limit in force (nil if it cannot be read).
    public static var current: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }
}
