import XCTest

/// A daemon that cannot make progress uses no CPU (`assertIdle`, `BlockedState`). The spool-full
/// states spun at a whole core: files held by `--max-spool-size` stayed announced, and the
/// engine's next wake-up was "now" for as long as the spool stayed full.
final class BlockedIsIdleTests: XCTestCase {
    func testEveryBlockedState_usesNoCPU() throws {
        try assertIdle(in: [
            .spoolFull, .spoolFullDuringOutage, .outage, .waitingForRetry, .throttledPaused, .throttledLow, .outsideUploadWindow,
        ])
    }
}
