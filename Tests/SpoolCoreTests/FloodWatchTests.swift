import SpoolCore
import XCTest

final class FloodWatchTests: XCTestCase {
    private let rate = 1_048_576.0

    func testAConnectionFloodedInTwoSamplesInARow_isNamed() {
        var watch = FloodWatch()
        XCTAssertNil(watch.observe([4: 0, 7: 100], at: 10, minimumBytesPerSecond: rate), "the first sample has nothing to compare")
        XCTAssertNil(watch.observe([4: 5_000_000, 7: 200], at: 11, minimumBytesPerSecond: rate), "one second of flood: a suspect")
        XCTAssertEqual(watch.observe([4: 9_000_000, 7: 300], at: 12, minimumBytesPerSecond: rate), 4)
    }

    func testABurst_orAFloodThatMoves_isNotNamed() {
        var watch = FloodWatch()
        _ = watch.observe([4: 0, 7: 0], at: 10, minimumBytesPerSecond: rate)
        XCTAssertNil(watch.observe([4: 2_000_000, 7: 0], at: 11, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([4: 2_000_100, 7: 0], at: 12, minimumBytesPerSecond: rate), "the burst ended")
        XCTAssertNil(watch.observe([4: 2_000_100, 7: 3_000_000], at: 13, minimumBytesPerSecond: rate), "another connection: a new suspect")
        XCTAssertNil(watch.observe([4: 2_000_100], at: 14, minimumBytesPerSecond: rate), "the suspect went away")
    }

    func testSamplesCloserThanAWindow_areSkipped_soShortSweepsNeedTwoFullSeconds() {
        // A sweep every 0.25 s (a short --timeout): 600 KB in half a second is one answer, not a flood.
        var watch = FloodWatch()
        _ = watch.observe([4: 0], at: 10, minimumBytesPerSecond: rate)
        XCTAssertNil(watch.observe([4: 300_000], at: 10.25, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([4: 600_000], at: 10.5, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([4: 600_000], at: 11, minimumBytesPerSecond: rate), "600 KB over the first second")
        XCTAssertNil(watch.observe([4: 3_000_000], at: 12, minimumBytesPerSecond: rate), "one second of flood: a suspect")
        XCTAssertNil(watch.observe([4: 4_000_000], at: 12.5, minimumBytesPerSecond: rate), "half a window: skipped")
        XCTAssertEqual(watch.observe([4: 6_000_000], at: 13, minimumBytesPerSecond: rate), 4)
    }

    func testAClockThatWentBack_dropsTheSuspect() {
        var watch = FloodWatch()
        _ = watch.observe([4: 0], at: 10, minimumBytesPerSecond: rate)
        XCTAssertNil(watch.observe([4: 5_000_000], at: 11, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([4: 9_000_000], at: 5, minimumBytesPerSecond: rate), "time went back: the suspect is dropped")
        XCTAssertNil(watch.observe([4: 14_000_000], at: 6, minimumBytesPerSecond: rate), "suspected again, not yet twice in a row")
    }
}
