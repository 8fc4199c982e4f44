import Glibc

/// The sender half of systemd's notify protocol (sd_notify(3)): one datagram per message to the
/// AF_UNIX socket named in `$NOTIFY_SOCKET` (a path, or an abstract name when it starts with '@').
///
/// Fire and forget: a message that cannot be sent (no listener, a full queue) is dropped, since
/// a service manager that went away must not stop uploads. The socket is non-blocking.
public final class NotifySocket: @unchecked Sendable {
    private let fd: Int32
    private var address = sockaddr_un()
    private let addressLength: socklen_t

    /// nil when `name` is empty, too long, or of an unsupported kind (e.g. `vsock:`).
    public init?(name: String) {
        var path = Array(name.utf8)
        guard !path.isEmpty, path[0] == UInt8(ascii: "/") || path[0] == UInt8(ascii: "@") else { return nil }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return nil }
        let abstract = path[0] == UInt8(ascii: "@")
        if abstract { path[0] = 0 }  // the abstract namespace: a leading NUL, no terminator
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        addressLength = socklen_t(pathOffset + path.count + (abstract ? 0 : 1))
        let socketType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        fd = socket(AF_UNIX, socketType, 0)
        guard fd >= 0 else { return nil }
    }

    deinit { Glibc.close(fd) }

    /// sendto(2) of `message` (e.g. `READY=1\nSTATUS=...`); true when the datagram went out.
    @discardableResult
    public func send(_ message: String) -> Bool {
        let bytes = Array(message.utf8)
        var address = self.address
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { buffer in
                    var n: Int
                    repeat { n = sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), sa, addressLength) }
                    while n < 0 && errno == EINTR
                    return n
                }
            }
        }
        return sent == bytes.count
    }
}
