import Foundation
import Glibc
import UploadReceiver
import XCTest

// Small helpers the integration tests share.

/// Checks `condition` every 20 ms until it holds or `timeout` passes (for states only visible on disk).
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A loopback port nothing listens on right now (bound, read, closed). For a server that must bind
/// it itself; a port only to be refused is a `RefusingPort`.
func freeLoopbackPort() throws -> UInt16 {
    let probe = UploadReceiver()
    let port = try probe.start()
    probe.stop()
    return port
}

/// A loopback port held bound and never listened on: a connection to it is refused, and no other
/// socket can take it until `release()` (a port found free and let go can be handed to the next
/// server that asks for any port: an outage then ended in the middle of a test).
final class RefusingPort: @unchecked Sendable {
    let port: UInt16
    private let lock = NSLock()
    private var fd: Int32

    /// Held until `release()`, or until the end of `test` when given.
    init(_ test: XCTestCase? = nil) throws {
        let sock = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard sock >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, length) == 0 && getsockname(sock, $0, &length) == 0 }
        }
        guard bound else {
            Glibc.close(sock)
            throw POSIXError(.EADDRINUSE)
        }
        fd = sock
        port = UInt16(bigEndian: address.sin_port)
        test?.addTeardownBlock { [self] in release() }
    }

    /// Lets the port go (a server is to listen on it now).
    func release() {
        lock.withLock {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}
