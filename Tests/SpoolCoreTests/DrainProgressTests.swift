import SpoolCore
import XCTest

final class DrainProgressTests: XCTestCase {
    func testText_itemsBytesRateETAAndRetries() {
        var p = DrainProgress()
        p.itemsTotal = 40
        p.bytesTotal = 10 << 20
        XCTAssertEqual(p.text, "0/40 items, 0 B/10.0 MiB, -/s, ETA -")
        p.itemsDone = 12
        p.bytesDone = 3 << 20
        p.elapsedSeconds = 3
        p.retriesWaiting = 2
        XCTAssertEqual(p.text, "12/40 items, 3.0 MiB/10.0 MiB, 1.0 MiB/s, ETA 7s, 2 retries waiting")
        p.retriesWaiting = 1
        p.paused = true
        XCTAssertEqual(p.text, "12/40 items, 3.0 MiB/10.0 MiB, 1.0 MiB/s, endpoint unreachable, paused, 1 retry waiting")
        p.paused = false
        p.throttledRate = 33.64
        XCTAssertEqual(p.text, "12/40 items, 3.0 MiB/10.0 MiB, 1.0 MiB/s, ETA 7s, throttled to 33.6 requests/s, 1 retry waiting")
        p.throttledRate = 250.4
        XCTAssertTrue(p.text.contains("throttled to 250 requests/s"), p.text)
        p.heldUntil = "22:00"
        p.paused = true
        XCTAssertEqual(p.text, "12/40 items, 3.0 MiB/10.0 MiB, 1.0 MiB/s, paused until 22:00 (upload window), 1 retry waiting")
    }

    func testETA_byItemsWhenThePayloadsAreEmpty_andLongDurations() {
        var p = DrainProgress()
        (p.itemsDone, p.itemsTotal, p.elapsedSeconds) = (10, 30, 5)
        XCTAssertEqual(p.etaSeconds, 10)
        p.bytesTotal = 100
        XCTAssertNil(p.etaSeconds, "bytes to send but none sent yet: no estimate")
        (p.bytesDone, p.bytesTotal, p.elapsedSeconds) = (1, 7300, 1)
        XCTAssertEqual(p.text.components(separatedBy: ", ")[3], "ETA 2h01m")
    }
}
