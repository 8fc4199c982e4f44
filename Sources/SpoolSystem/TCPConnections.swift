import CSpoolShims
import Glibc

/// The TCP connections of this process, found by their descriptors in `/proc/self/fd`: how many
/// bytes each has received, and a way to close one. FoundationNetworking gives no handle on the
/// connection of a task, and its `cancel` can wait for seconds while a server floods that
/// connection; `URLSessionTransport` finds the flooded one by its traffic and aborts it.
public enum TCPConnections {
    /// Bytes received so far (`TCP_INFO`) by each TCP connection this process holds to a peer on
    /// `port` (a server it uploads to: so a server socket of the same process, whose peer is a
    /// client's ephemeral port, is never taken for one), by descriptor; empty if `/proc` is not
    /// mounted.
    public static func bytesReceived(fromPort port: UInt16) -> [Int32: UInt64] {
        var received: [Int32: UInt64] = [:]
        forEachConnection(toPort: port) { fd in
            var bytes: UInt64 = 0
            if spoold_tcp_bytes_received(fd, &bytes) == 0 { received[fd] = bytes }
        }
        return received
    }

    /// Bytes in the send queue (`SIOCOUTQ`: not yet sent, or sent and not acknowledged) of each
    /// TCP connection this process holds to a peer on `port`, by descriptor. A connection whose
    /// reader is slow has bytes queued; one whose writer stopped has none.
    public static func unsentBytes(toPort port: UInt16) -> [Int32: Int] {
        var unsent: [Int32: Int] = [:]
        forEachConnection(toPort: port) { fd in
            var bytes: Int32 = 0
            if spoold_tcp_unsent_bytes(fd, &bytes) == 0 { unsent[fd] = Int(bytes) }
        }
        return unsent
    }

    /// Calls `body` with each descriptor of this process that is a socket connected to `port`.
    private static func forEachConnection(toPort port: UInt16, _ body: (Int32) -> Void) {
        guard let folder = opendir("/proc/self/fd") else { return }
        defer { closedir(folder) }
        let own = dirfd(folder)
        while let entry = readdir(folder) {
            let name = DirectoryEntryName.text(of: entry)
            guard let fd = Int32(name), fd != own, peerPort(fd) == port else { continue }
            body(fd)
        }
    }

    /// The peer's port of a connected IPv4 or IPv6 socket, else nil.
    private static func peerPort(_ fd: Int32) -> UInt16? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard got == 0 else { return nil }
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        case AF_INET6:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
        default:
            return nil
        }
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
