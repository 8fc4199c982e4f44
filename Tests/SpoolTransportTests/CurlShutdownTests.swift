import Foundation
import SpoolCore
import SpoolCurlTransport
import XCTest

/// The curl transport after `shutdown()` (the daemon's last step): its thread has freed the multi
/// handle, so what still arrives must end at once without reaching it.
final class CurlShutdownTests: XCTestCase {
    func testAfterShutdown_anUploadEndsCancelled_andCancelsAndStopsAreHarmless() throws {
        let transport = CurlTransport(deadlineSeconds: 5, idleSeconds: 5, connections: 1)
        transport.shutdown()
        let ended = expectation(description: "the upload ended")
        transport.start(try uploadRequest(to: "http://127.0.0.1:9/late")) { outcome in
            XCTAssertTrue(outcome.isCancelled, "\(outcome)")
            ended.fulfill()
        }
        transport.cancelAll()
        transport.shutdown()
        wait(for: [ended], timeout: 5)
    }
}
