import SpoolCore
import XCTest

final class UndeliveredFloodTests: XCTestCase {
    private let rate = Double(256 << 10)

    func testBytesNeverHandedOver_inTwoWindows_nameTheConnection() {
        var watch = UndeliveredFlood()
        XCTAssertNil(watch.observe([5: 0, 6: 0], delivered: 0, at: 0, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([5: 2 << 20, 6: 4000], delivered: 0, at: 1, minimumBytesPerSecond: rate), "suspect after one window")
        XCTAssertEqual(watch.observe([5: (2 << 20) + 100_000, 6: 8000], delivered: 0, at: 2, minimumBytesPerSecond: rate), 5,
                       "still receiving, more slowly: named")
    }

    func testAnswersHandedOver_areNeverAFlood_howeverFast() {
        var watch = UndeliveredFlood()
        var received: UInt64 = 0
        var delivered: UInt64 = 0
        XCTAssertNil(watch.observe([5: 0], delivered: 0, at: 0, minimumBytesPerSecond: rate))
        for second in 1...5 {
            // 1,500 answers a second of 4 KB of JSON (handed over) and their headers (not).
            received += 1500 * (4096 + 200)
            delivered += 1500 * 4096
            XCTAssertNil(watch.observe([5: received], delivered: delivered, at: Double(second), minimumBytesPerSecond: rate))
        }
    }

    func testOneBurst_thenSilence_isNotAFlood() {
        var watch = UndeliveredFlood()
        XCTAssertNil(watch.observe([5: 0], delivered: 0, at: 0, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([5: 1 << 20], delivered: 0, at: 1, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([5: 1 << 20], delivered: 0, at: 2, minimumBytesPerSecond: rate))
    }

    func testSamplesCloserThanAWindow_areSkipped() {
        var watch = UndeliveredFlood()
        XCTAssertNil(watch.observe([5: 0], delivered: 0, at: 0, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([5: 2 << 20], delivered: 0, at: 1, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([5: 3 << 20], delivered: 0, at: 1.5, minimumBytesPerSecond: rate), "half a window: skipped")
        XCTAssertEqual(watch.observe([5: 3 << 20], delivered: 0, at: 2, minimumBytesPerSecond: rate), 5)
    }
}
