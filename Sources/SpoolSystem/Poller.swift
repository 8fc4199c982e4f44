import Glibc

/// Waits on a few descriptors with a timeout: the engine's only blocking point (`poll(2)`).
public enum Poller {
    /// Returns the descriptors that are readable; empty on timeout.
    /// - Parameter timeoutMilliseconds: negative waits forever.
    public static func wait(for descriptors: [Int32], timeoutMilliseconds: Int32) -> [Int32] {
        var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let r = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        guard r > 0 else { return [] }
        return fds.filter { $0.revents != 0 }.map(\.fd)
    }
}
