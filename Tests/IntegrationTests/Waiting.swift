import Foundation
import Glibc
import UploadReceiver

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

/// A loopback port nothing listens on right now (bound, read, closed).
func freeLoopbackPort() throws -> UInt16 {
    let probe = UploadReceiver()
    let port = try probe.start()
    probe.stop()
    return port
}
