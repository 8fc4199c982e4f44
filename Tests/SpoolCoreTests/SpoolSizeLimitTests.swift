import SpoolCore
import XCTest

final class SpoolSizeLimitTests: XCTestCase {
    func testAdmits_whileBelowTheLimit_soAtMostOneItemOver() {
        let limit = SpoolSizeLimit(bytes: 100)
        XCTAssertTrue(limit.admits(queued: 0))
        XCTAssertTrue(limit.admits(queued: 99), "the next item may take the queue over, once")
        XCTAssertFalse(limit.admits(queued: 100))
        XCTAssertTrue(limit.isFull(queued: 150))
    }

    func testMustDrop_onlyWhenDroppingOldest_andOnlyWhileTheQueueIsAtTheLimit() {
        let drop = SpoolSizeLimit(bytes: 100, whenFull: .dropOldest)
        XCTAssertTrue(drop.mustDrop(queued: 100))
        XCTAssertTrue(drop.mustDrop(queued: 180))
        XCTAssertFalse(drop.mustDrop(queued: 99), "below the limit the new item joins (at most one item over)")
        XCTAssertFalse(drop.mustDrop(queued: 0))
        XCTAssertFalse(SpoolSizeLimit(bytes: 100).mustDrop(queued: 150), "block never drops")
    }
}
