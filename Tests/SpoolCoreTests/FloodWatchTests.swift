import SpoolCore
import XCTest

final class FloodWatchTests: XCTestCase {
    private let fast = 1_048_576.0
    private let still = 65_536.0

    private func observe(_ watch: inout FloodWatch, _ sample: [Int32: UInt64], at seconds: Double) -> Int32? {
        watch.observe(sample, at: seconds, suspectBytesPerSecond: fast, confirmBytesPerSecond: still)
    }

    func testAFastWindow_thenStillReceiving_isAFlood() {
        var watch = FloodWatch()
        XCTAssertNil(observe(&watch, [4: 0, 7: 100], at: 10), "the first sample has nothing to compare")
        XCTAssertNil(observe(&watch, [4: 50_000_000, 7: 200], at: 11), "one fast second: a suspect")
        // Slowed down (FoundationNetworking copies a growing redirect body), but still coming.
        XCTAssertEqual(observe(&watch, [4: 50_300_000, 7: 300], at: 12), 4)
    }

    func testABurstThatEnded_orTrafficBelowTheRates_isNoFlood() {
        var watch = FloodWatch()
        _ = observe(&watch, [4: 0, 7: 0], at: 10)
        XCTAssertNil(observe(&watch, [4: 1_000_000, 7: 0], at: 11), "one answer of 1 MB in a second: a suspect")
        XCTAssertNil(observe(&watch, [4: 1_000_100, 7: 0], at: 12), "then quiet: the answer ended")
        XCTAssertNil(observe(&watch, [4: 1_000_100, 7: 500_000], at: 13), "500 KB/s of small answers: never a suspect")
        XCTAssertNil(observe(&watch, [4: 1_000_100, 7: 1_000_000], at: 14))
        XCTAssertNil(observe(&watch, [4: 1_000_100, 7: 1_500_000], at: 15))
    }

    func testTheSuspectGoingAway_orItsNumberReused_isNoFlood() {
        var watch = FloodWatch()
        _ = observe(&watch, [4: 0], at: 10)
        XCTAssertNil(observe(&watch, [4: 5_000_000], at: 11))
        XCTAssertNil(observe(&watch, [:], at: 12), "closed")
        _ = observe(&watch, [4: 0], at: 13)
        XCTAssertNil(observe(&watch, [4: 5_000_000], at: 14))
        XCTAssertNil(observe(&watch, [4: 100], at: 15), "its count went down: another connection under the number")
    }

    func testSamplesCloserThanAWindow_areSkipped_soShortSweepsNeedTwoFullWindows() {
        // A sweep every 0.25 s (a short --timeout): samples in between are not compared.
        var watch = FloodWatch()
        _ = observe(&watch, [4: 0], at: 10)
        XCTAssertNil(observe(&watch, [4: 300_000], at: 10.25))
        XCTAssertNil(observe(&watch, [4: 600_000], at: 10.5))
        XCTAssertNil(observe(&watch, [4: 600_000], at: 11), "600 KB in the first second: not a suspect")
        XCTAssertNil(observe(&watch, [4: 3_000_000], at: 12), "a fast second: a suspect")
        XCTAssertNil(observe(&watch, [4: 3_100_000], at: 12.5), "half a window: skipped")
        XCTAssertEqual(observe(&watch, [4: 3_200_000], at: 13), 4)
    }

    func testAClockThatWentBack_dropsTheSuspect() {
        var watch = FloodWatch()
        _ = observe(&watch, [4: 0], at: 10)
        XCTAssertNil(observe(&watch, [4: 5_000_000], at: 11))
        XCTAssertNil(observe(&watch, [4: 9_000_000], at: 5), "time went back: the suspect is dropped")
        XCTAssertNil(observe(&watch, [4: 14_000_000], at: 6), "a suspect again, not yet confirmed")
    }
}
