import SpoolCore
import XCTest

final class SpoolSizeLimitTests: XCTestCase {
    func testByteCount_acceptsSIAndBinarySuffixes_rejectsTheRest() {
        XCTAssertEqual(ByteCount.parse("0"), 0)
        XCTAssertEqual(ByteCount.parse("1500"), 1500)
        XCTAssertEqual(ByteCount.parse("1500B"), 1500)
        XCTAssertEqual(ByteCount.parse("10K"), 10_000)
        XCTAssertEqual(ByteCount.parse("3M"), 3_000_000)
        XCTAssertEqual(ByteCount.parse("2G"), 2_000_000_000)
        XCTAssertEqual(ByteCount.parse("64KiB"), 65_536)
        XCTAssertEqual(ByteCount.parse("5MiB"), 5 << 20)
        XCTAssertEqual(ByteCount.parse("2GiB"), 2 << 30)
        for bad in ["", "K", "1.5M", "-1", "+1", " 1", "1 M", "1k", "1MB", "1Mi", "99999999999999999999", "99999999999G", "١٢"] {
            XCTAssertNil(ByteCount.parse(bad), bad)
        }
    }

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
