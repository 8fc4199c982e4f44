import XCTest

/// `ThrottlingTests` with `--transport curl` (each test named again: Linux's test discovery
/// finds only the methods a class declares).
final class CurlThrottlingTests: ThrottlingTests {
    override class var transportArguments: [String] { ["--transport", "curl"] }

    override func testThreeDaemons_againstAThrottlingStore_storeEveryItemOnce_noneFailed() throws {
        try super.testThreeDaemons_againstAThrottlingStore_storeEveryItemOnce_noneFailed()
    }

    override func testPausedByRetryAfter_statusShowsIt() throws {
        try super.testPausedByRetryAfter_statusShowsIt()
    }
}
