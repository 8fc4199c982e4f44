import CSpoolShims
import Glibc

/// The TCP connections of this process, found by their descriptors in `/proc/self/fd`: how many
/// bytes each has received, and a way to close one. FoundationNetworking gives no handle on the
/// connection of a task, and its `cancel` can wait for seconds while a server floods that
/// connection; `URLSessionTransport` finds the flooded one by its traffic and aborts it.
public enum TCPConnections {
    /// Bytes received so far (`TCP_INFO`) by each TCP socket this process holds, by descriptor;
    /// empty if `/proc` is not mounted.
    public static func bytesReceived() -> [Int32: UInt64] {
        guard let folder = opendir("/proc/self/fd") else { return [:] }
        defer { closedir(folder) }
        let own = dirfd(folder)
        var received: [Int32: UInt64] = [:]
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name), fd != own else { continue }
            var bytes: UInt64 = 0
            if spoold_tcp_bytes_received(fd, &bytes) == 0 { received[fd] = bytes }
        }
        return received
    }

    /// Aborts the connection: `connect(2)` to `AF_UNSPEC` makes Linux reset it (`tcp_disconnect`
    /// sends RST), so the peer's next send fails at once, even when it is blocked on a full
    /// window (a `shutdown` only sends FIN, which a server that only writes never reads). The
    /// descriptor stays open and unconnected: its owner's next read fails, and its owner closes it.
    public static func abort(_ fd: Int32) {
        var address = sockaddr()
        address.sa_family = sa_family_t(AF_UNSPEC)
        _ = Glibc.connect(fd, &address, socklen_t(MemoryLayout<sockaddr>.size))
    }
}
