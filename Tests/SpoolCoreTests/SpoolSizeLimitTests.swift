import SpoolCore
import XCTest

final class SpoolSizeLimitTests: XCTestCase {
    private func disk(_ bytes: Int64, items: Int = 1) -> QueueUsage { QueueUsage(items: items, payloadBytes: 0, diskBytes: bytes) }
    private func items(_ count: Int) -> QueueUsage { QueueUsage(items: count, payloadBytes: 0, diskBytes: Int64(count) * 8192) }

    func testAdmits_whileBelowTheLimit_soAtMostOneItemOver() {
        let limit = SpoolSizeLimit(bytes: 100)
        XCTAssertTrue(limit.admits(disk(0, items: 0)))
        XCTAssertTrue(limit.admits(disk(99)), "the next item may take the queue over, once")
        XCTAssertFalse(limit.admits(disk(100)))
        XCTAssertTrue(limit.isFull(disk(150)))
    }

    func testMustDrop_onlyWhenDroppingOldest_andOnlyWhileTheQueueIsAtTheLimit() {
        let drop = SpoolSizeLimit(bytes: 100, whenFull: .dropOldest)
        XCTAssertTrue(drop.mustDrop(disk(100)))
        XCTAssertTrue(drop.mustDrop(disk(180)))
        XCTAssertFalse(drop.mustDrop(disk(99)), "below the limit the new item joins (at most one item over)")
        XCTAssertFalse(drop.mustDrop(disk(0, items: 0)))
        XCTAssertFalse(SpoolSizeLimit(bytes: 100).mustDrop(disk(150)), "block never drops")
    }

    /// The size counts the disk the items take, not their payload: a million 16-byte items are
    /// 16 MB of payload but 8 GB of blocks.
    func testTheSizeLimit_countsDiskNotPayload() {
        let limit = SpoolSizeLimit(bytes: 1 << 30)
        let tiny = QueueUsage(items: 1_000_000, payloadBytes: 16_000_000, diskBytes: 8_192_000_000)
        XCTAssertFalse(limit.admits(tiny))
        XCTAssertEqual(limit.reached(tiny), ["--max-spool-size"])
    }

    func testItemsLimit_alone_andWithTheSizeLimit_eitherOneFills() {
        let count = SpoolSizeLimit(items: 3)
        XCTAssertTrue(count.admits(items(2)))
        XCTAssertFalse(count.admits(items(3)))
        XCTAssertEqual(count.reached(items(3)), ["--max-items"])
        let both = SpoolSizeLimit(bytes: 1 << 30, items: 1000, whenFull: .dropOldest)
        XCTAssertFalse(both.admits(items(1000)), "the items limit fills first")
        XCTAssertFalse(both.admits(QueueUsage(items: 1, payloadBytes: 0, diskBytes: 1 << 30)), "the size limit fills first")
        XCTAssertTrue(both.mustDrop(items(1000)))
        XCTAssertFalse(both.hasRoom(items(950), share: 0.9), "room again only below 90 % of each")
        XCTAssertTrue(both.hasRoom(items(899), share: 0.9))
    }
}
