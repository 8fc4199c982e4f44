import Synchronization
@testable import SpoolTransport
import XCTest

/// How one request of a multipart upload is cancelled: the transport's handler runs exactly
/// once, whether the cancel comes before or after the transport registered it.
final class RequestCancellationTests: XCTestCase {
    func testCancelAfterRegistering_runsTheHandlerOnce() {
        let cancellation = RequestCancellation()
        let runs = Mutex(0)
        cancellation.whenCancelled { runs.withLock { $0 += 1 } }
        XCTAssertEqual(runs.withLock { $0 }, 0)
        cancellation.cancel()
        cancellation.cancel()
        XCTAssertEqual(runs.withLock { $0 }, 1)
    }

    func testCancelBeforeRegistering_runsTheHandlerAsItIsRegistered() {
        let cancellation = RequestCancellation()
        cancellation.cancel()
        let runs = Mutex(0)
        cancellation.whenCancelled { runs.withLock { $0 += 1 } }
        XCTAssertEqual(runs.withLock { $0 }, 1)
        XCTAssertTrue(cancellation.isCancelled)
    }
}
