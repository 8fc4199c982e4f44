import SpoolCore
import XCTest

final class StalledUploadTests: XCTestCase {
    func testQuietLimit_isHalfTheIdleTimeout_between2And10Seconds() {
        XCTAssertEqual(StalledUpload.quietLimitSeconds(idleSeconds: 60), 10)
        XCTAssertEqual(StalledUpload.quietLimitSeconds(idleSeconds: 10), 5)
        XCTAssertEqual(StalledUpload.quietLimitSeconds(idleSeconds: 1), 2)
    }

    func testWriterStopped_onlyWhenEveryConnectionHasNothingQueued() {
        XCTAssertTrue(StalledUpload.writerStopped(unsentBytes: [7: 0, 9: 0]))
        XCTAssertFalse(StalledUpload.writerStopped(unsentBytes: [7: 0, 9: 65_536]), "one may be the quiet upload's own, waiting for its reader")
        XCTAssertFalse(StalledUpload.writerStopped(unsentBytes: [:]), "no connection found (a proxy, no /proc): nothing is ended")
    }
}
