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

    func testTimeThatDidNotMove_comparesNothing() {
        var watch = FloodWatch()
        _ = watch.observe([4: 0], at: 10, minimumBytesPerSecond: rate)
        XCTAssertNil(watch.observe([4: 5_000_000], at: 11, minimumBytesPerSecond: rate))
        XCTAssertNil(watch.observe([4: 9_000_000], at: 11, minimumBytesPerSecond: rate), "no time passed: the suspect is dropped")
        XCTAssertNil(watch.observe([4: 14_000_000], at: 12, minimumBytesPerSecond: rate), "suspected again, not yet twice in a row")
    }
}
