import SpoolCore
import XCTest

/// Local time and summer time, under a fixed rule (`ZoneRules.centralEuropean`).
final class LocalZoneTests: XCTestCase {
    private let zone = ZoneRules.centralEuropean

    func testTheRule_isUTCPlusOneInWinterAndTwoInSummer() {
        XCTAssertEqual(zone.secondsEast(at: utc("2026-03-29T00:59:59.999Z")), 3600)
        XCTAssertEqual(zone.secondsEast(at: utc("2026-03-29T01:00:00Z")), 7200)
        XCTAssertEqual(zone.secondsEast(at: utc("2026-10-25T00:59:59.999Z")), 7200)
        XCTAssertEqual(zone.secondsEast(at: utc("2026-10-25T01:00:00Z")), 3600)
    }

    /// Summer time begins: 02:30 is never on the clock that day; it takes effect when the clock
    /// jumps from 02:00 to 03:00.
    func testATimeTheClockSkips_isReachedWhenItJumps() {
        let local = localMilliseconds("2026-03-29T02:30:00Z")
        XCTAssertEqual(zone.firstInstant(reaching: local, from: utc("2026-03-28T22:00:00Z")), utc("2026-03-29T01:00:00Z"))
        // 08:00 after the jump is 06:00 UTC, though the search starts on the winter offset.
        XCTAssertEqual(
            zone.firstInstant(reaching: localMilliseconds("2026-03-29T08:00:00Z"), from: utc("2026-03-28T21:00:00Z")),
            utc("2026-03-29T06:00:00Z"))
    }

    /// Summer time ends: the clock reads 02:00 to 03:00 twice. A time in that hour is reached the
    /// first time; the rules are read against the furthest the clock has read, so the second
    /// pass goes back to nothing; a time after it is reached on the winter offset.
    func testTheRepeatedHour_isPassedOnce() {
        XCTAssertEqual(
            zone.firstInstant(reaching: localMilliseconds("2026-10-25T02:30:00Z"), from: utc("2026-10-24T20:00:00Z")),
            utc("2026-10-25T00:30:00Z"), "02:30 summer time, the first one")
        XCTAssertEqual(
            zone.firstInstant(reaching: localMilliseconds("2026-10-25T03:30:00Z"), from: utc("2026-10-24T20:00:00Z")),
            utc("2026-10-25T02:30:00Z"), "03:30 winter time: the clock read 02:xx twice before")
        // 01:10 UTC: the clock reads 02:10 again; the rules read 02:59:59.999, where it was.
        XCTAssertEqual(zone.localMilliseconds(at: utc("2026-10-25T01:10:00Z")), localMilliseconds("2026-10-25T02:10:00Z"))
        XCTAssertEqual(zone.ruleMilliseconds(at: utc("2026-10-25T01:10:00Z")), localMilliseconds("2026-10-25T02:59:59.999Z"))
        // Once the clock is past where it was, the rules read it again.
        XCTAssertEqual(zone.ruleMilliseconds(at: utc("2026-10-25T02:00:00Z")), localMilliseconds("2026-10-25T03:00:00Z"))
        XCTAssertEqual(zone.ruleMilliseconds(at: utc("2026-10-25T00:10:00Z")), localMilliseconds("2026-10-25T02:10:00Z"))
    }

    /// Local milliseconds of a wall-clock reading, written as if it were UTC.
    private func localMilliseconds(_ reading: String) -> Int64 { utc(reading).millisecondsSinceEpoch }
}
