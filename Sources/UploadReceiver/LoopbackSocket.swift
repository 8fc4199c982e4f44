import Glibc

/// A TCP socket on 127.0.0.1, bound (port 0: one the kernel picks) and listening when asked: the
/// receiver's own, and a test's that must refuse connections (bound, never listening, so no other
/// server can be handed the port) or never accept them.
public enum LoopbackSocket {
    /// The socket's descriptor (close-on-exec; the caller closes it) and its port.
    public static func open(port: UInt16 = 0, listening backlog: Int32? = nil, reuseAddress: Bool = false) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ReceiverError.socket(operation: "socket", errno: errno) }
        func fail(_ operation: String) -> ReceiverError {
            let code = errno
            close(fd)
            return ReceiverError.socket(operation: operation, errno: code)
        }
        if reuseAddress {
            var reuse: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian  // 127.0.0.1
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw fail("bind 127.0.0.1:\(port)") }
        if let backlog, listen(fd, backlog) != 0 { throw fail("listen") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw fail("getsockname") }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}
