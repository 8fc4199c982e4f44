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
        (fd, port) = try LoopbackSocket.open()
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
