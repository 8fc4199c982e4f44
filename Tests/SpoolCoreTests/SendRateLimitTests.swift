import SpoolCore
import XCTest

final class SendRateLimitTests: XCTestCase {
    // Times in 1/128 s steps, exact in binary.

    func testARead_waitsUntilAllItAsksForIsDue_orAFullBucket() {
        var limit = SendRateLimit(bytesPerSecond: 128_000)
        XCTAssertEqual(limit.burst, 6_400, "50 ms of the rate")
        XCTAssertEqual(limit.take(upTo: 65_536, now: 10), 6_400, "a full bucket for a read that asks more")
        XCTAssertEqual(limit.take(upTo: 1_000, now: 10), 0)
        XCTAssertEqual(limit.secondsUntilDue(1_000, now: 10), 1.0 / 128, accuracy: 1e-12)
        XCTAssertEqual(limit.take(upTo: 1_000, now: 10 + 1.0 / 128), 1_000, "1/128 s of the rate")
        XCTAssertEqual(limit.take(upTo: 65_536, now: 10 + 2.0 / 128), 0, "1,000 due, not a full bucket: wait")
        XCTAssertEqual(limit.secondsUntilDue(65_536, now: 10 + 2.0 / 128), 5_400 / 128_000, accuracy: 1e-12)
        XCTAssertEqual(limit.take(upTo: 300, now: 10 + 2.0 / 128), 300, "a small read goes at once")
    }

    func testAQuietSpell_fillsOnlyUpToTheBurst() {
        var limit = SendRateLimit(bytesPerSecond: 128_000)
        _ = limit.take(upTo: 6_400, now: 0)
        XCTAssertEqual(limit.take(upTo: 1 << 20, now: 60), 6_400, "a minute of silence is not a minute of credit")
        XCTAssertEqual(limit.take(upTo: 1, now: 60), 0)
    }

    func testOverAnyLongRun_theBytesGrantedStayWithinTheRatePlusOneBurst_andReachIt() {
        var limit = SendRateLimit(bytesPerSecond: 128 << 10)
        var granted = 0
        var reads = 0
        var now = 0.0
        while now < 3 {
            let n = limit.take(upTo: 64 << 10, now: now)
            granted += n
            if n > 0 { reads += 1 }
            now += 1.0 / 1024
        }
        XCTAssertLessThanOrEqual(Double(granted), 3 * Double(128 << 10) + limit.burst)
        XCTAssertGreaterThanOrEqual(Double(granted), 2.9 * Double(128 << 10), "the rate is reached")
        XCTAssertLessThanOrEqual(reads, 61, "one full bucket per 50 ms, not a sliver per call")
    }

    func testGiveBack_returnsUnsentBytes_uptoTheBurst() {
        var limit = SendRateLimit(bytesPerSecond: 128_000)
        XCTAssertEqual(limit.take(upTo: 4_000, now: 1), 4_000)
        limit.giveBack(3_000)
        XCTAssertEqual(limit.take(upTo: 5_400, now: 1), 5_400)
        limit.giveBack(1 << 20)
        XCTAssertEqual(limit.take(upTo: 65_536, now: 1), 6_400)
    }

    func testATinyRate_grantsOneByteAtATime() {
        var limit = SendRateLimit(bytesPerSecond: 4)
        XCTAssertEqual(limit.burst, 1)
        XCTAssertEqual(limit.take(upTo: 100, now: 0), 1)
        XCTAssertEqual(limit.take(upTo: 100, now: 0.125), 0)
        XCTAssertEqual(limit.secondsUntilDue(100, now: 0.125), 0.125, accuracy: 1e-12)
        XCTAssertEqual(limit.take(upTo: 100, now: 0.25), 1)
        XCTAssertEqual(SendRateLimit(bytesPerSecond: 0).bytesPerSecond, 1, "at least a byte a second")
    }

    /// A timetable changes the rate: the bucket refills at the new rate from then on, and keeps
    /// at most the new rate's 50 ms.
    func testANewRate_refillsAtItFromThenOn() {
        var limit = SendRateLimit(bytesPerSecond: 128_000)
        XCTAssertEqual(limit.take(upTo: 6_400, now: 1), 6_400)
        limit.change(bytesPerSecond: 1_280_000)
        XCTAssertEqual(limit.burst, 64_000)
        XCTAssertEqual(limit.take(upTo: 12_800, now: 1 + 1.0 / 128), 0, "10,000 bytes accrued in 1/128 s at the new rate")
        XCTAssertEqual(limit.take(upTo: 10_000, now: 1 + 1.0 / 128), 10_000)
        XCTAssertEqual(limit.take(upTo: 1, now: 2), 1, "a full bucket at the new rate")
        limit.change(bytesPerSecond: 128_000)
        XCTAssertEqual(limit.take(upTo: 65_536, now: 2), 6_400, "cut to the lower rate's 50 ms")
        XCTAssertEqual(limit.turnSeconds, 0.05, accuracy: 1e-12)
    }
}
