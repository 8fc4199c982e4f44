import SpoolCore
import XCTest

/// `--upload-window`: when uploads may go, in local time.
final class UploadWindowsTests: XCTestCase {
    private func state(_ windows: [String], at time: String, zone: LocalZone = .utc) throws -> (Bool, Timestamp?) {
        let state = try UploadWindows.parse(windows).inForce(at: utc(time), zone: zone)
        return (state.open, state.until)
    }

    /// `22:00-06:00`: opens at 22:00, closes at 06:00 the next morning, every day.
    func testANightWindow_opensClosesAndSpansMidnight() throws {
        var (open, until) = try state(["22:00-06:00"], at: "2026-11-23T21:59:59.999Z")
        XCTAssertFalse(open)
        XCTAssertEqual(until, utc("2026-11-23T22:00:00Z"), "opens at 22:00")
        (open, until) = try state(["22:00-06:00"], at: "2026-11-23T22:00:00Z")
        XCTAssertTrue(open)
        XCTAssertEqual(until, utc("2026-11-24T06:00:00Z"), "closes the next morning")
        (open, _) = try state(["22:00-06:00"], at: "2026-11-24T00:00:00Z")
        XCTAssertTrue(open, "midnight is inside")
        (open, until) = try state(["22:00-06:00"], at: "2026-11-24T06:00:00Z")
        XCTAssertFalse(open, "the end is not inside")
        XCTAssertEqual(until, utc("2026-11-24T22:00:00Z"))
    }

    /// Weekdays: `Sat-08:00-18:00` every Saturday; `Fri-18:00-Mon-06:00` over the weekend.
    func testWeekdayWindows_holdOnTheirDaysOnly() throws {
        var (open, until) = try state(["Sat-08:00-18:00"], at: "2026-11-28T12:00:00Z")
        XCTAssertTrue(open)
        XCTAssertEqual(until, utc("2026-11-28T18:00:00Z"))
        (open, until) = try state(["Sat-08:00-18:00"], at: "2026-11-29T12:00:00Z")  // Sunday
        XCTAssertFalse(open)
        XCTAssertEqual(until, utc("2026-12-05T08:00:00Z"), "next Saturday")
        (open, until) = try state(["Fri-18:00-Mon-06:00"], at: "2026-11-29T12:00:00Z")
        XCTAssertTrue(open, "Sunday, inside the weekend")
        XCTAssertEqual(until, utc("2026-11-30T06:00:00Z"), "Monday 06:00")
        (open, until) = try state(["Fri-18:00-Mon-06:00"], at: "2026-11-25T12:00:00Z")
        XCTAssertFalse(open, "Wednesday")
        XCTAssertEqual(until, utc("2026-11-27T18:00:00Z"))
        // A window from a weekday ends at the first such time after it: Monday 22:00 to Tuesday 06:00.
        (open, _) = try state(["Mon-22:00-06:00"], at: "2026-11-24T05:00:00Z")
        XCTAssertTrue(open)
        (open, _) = try state(["Mon-22:00-06:00"], at: "2026-11-25T05:00:00Z")
        XCTAssertFalse(open, "Wednesday morning: only after Monday")
    }

    /// Windows add up; overlapping ones make one.
    func testSeveralWindows_addUp() throws {
        var (open, until) = try state(["08:00-10:00", "09:00-12:00 13:00-14:00"], at: "2026-11-23T08:30:00Z")
        XCTAssertTrue(open)
        XCTAssertEqual(until, utc("2026-11-23T12:00:00Z"), "one stretch to noon")
        (open, until) = try state(["08:00-10:00", "09:00-12:00 13:00-14:00"], at: "2026-11-23T12:30:00Z")
        XCTAssertFalse(open)
        XCTAssertEqual(until, utc("2026-11-23T13:00:00Z"))
        (open, until) = try state(["00:00-00:00"], at: "2026-11-23T12:30:00Z")
        XCTAssertTrue(open, "a window that ends where it starts lasts the day")
        XCTAssertNil(until, "always open")
        (open, until) = try state(["06:00-18:00", "18:00-06:00"], at: "2026-11-23T12:30:00Z")
        XCTAssertTrue(open)
        XCTAssertNil(until, "two halves make the whole day")
    }

    /// A time may have seconds (`HH:MM:SS`): a window a few seconds wide.
    func testAWindowWithSeconds_opensAndClosesOnTheSecond() throws {
        var (open, until) = try state(["08:00:30-08:00:45"], at: "2026-11-23T08:00:29.999Z")
        XCTAssertFalse(open)
        XCTAssertEqual(until, utc("2026-11-23T08:00:30Z"))
        (open, until) = try state(["08:00:30-08:00:45"], at: "2026-11-23T08:00:30Z")
        XCTAssertTrue(open)
        XCTAssertEqual(until, utc("2026-11-23T08:00:45Z"))
    }

    /// The times are local: 22:00 in UTC+01:00 is 21:00 UTC.
    func testTheTimes_areLocal() throws {
        let (open, until) = try state(["22:00-06:00"], at: "2026-11-23T20:59:00Z", zone: .fixed(secondsEast: 3600))
        XCTAssertFalse(open)
        XCTAssertEqual(until, utc("2026-11-23T21:00:00Z"))
    }

    /// Summer time ends (2026-10-25, Central Europe): a window `02:00-02:30` opens and closes in
    /// the first pass of the repeated hour and does not open again in the second.
    func testSummerTimeEnds_aWindowInTheRepeatedHourOpensOnce() throws {
        let zone = ZoneRules.centralEuropean
        var (open, until) = try state(["02:00-02:30"], at: "2026-10-25T00:10:00Z", zone: zone)
        XCTAssertTrue(open, "02:10 summer time")
        XCTAssertEqual(until, utc("2026-10-25T00:30:00Z"))
        (open, until) = try state(["02:00-02:30"], at: "2026-10-25T01:10:00Z", zone: zone)
        XCTAssertFalse(open, "02:10 winter time: the window was passed already")
        XCTAssertEqual(until, utc("2026-10-26T01:00:00Z"), "the next night, 02:00 winter time")
    }

    /// Summer time begins (2026-03-29): a window opening at 02:30, a time the clock skips, opens
    /// as the clock jumps to 03:00.
    func testSummerTimeBegins_aWindowAtASkippedTimeOpensAtTheJump() throws {
        let zone = ZoneRules.centralEuropean
        var (open, until) = try state(["02:30-04:00"], at: "2026-03-29T00:30:00Z", zone: zone)
        XCTAssertFalse(open)
        XCTAssertEqual(until, utc("2026-03-29T01:00:00Z"), "the jump from 02:00 to 03:00")
        (open, until) = try state(["02:30-04:00"], at: "2026-03-29T01:00:00Z", zone: zone)
        XCTAssertTrue(open)
        XCTAssertEqual(until, utc("2026-03-29T02:00:00Z"), "04:00 summer time")
    }

    func testWhatIsNotAWindow_isRefusedWithTheReason() {
        func problem(_ texts: [String]) -> String {
            do {
                _ = try UploadWindows.parse(texts)
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(problem([]), "nothing given (a window such as 22:00-06:00)")
        XCTAssertEqual(problem([" "]), "nothing given (a window such as 22:00-06:00)")
        XCTAssertEqual(problem(["22:00"]), "'22:00' is not a window START-END (e.g. 22:00-06:00, Sat-08:00-18:00 or Fri-18:00-Mon-06:00)")
        XCTAssertEqual(problem(["22:00-24:00"]), "'22:00-24:00': '24:00' is not a time HH:MM (00:00 to 23:59) or HH:MM:SS")
        XCTAssertEqual(problem(["22:00-Mon-06:00"]), "'22:00-Mon-06:00': a window with a weekday at its end needs one at its start")
        XCTAssertEqual(problem(["Mon-22:00-Fun-06:00"]), "'Mon-22:00-Fun-06:00': 'Fun' is not a weekday (Mon ... Sun, or Monday ... Sunday)")
        XCTAssertEqual(problem(["Mon-22:00-Tue-06:00-07:00"]), "'Mon-22:00-Tue-06:00-07:00' is not a window START-END (e.g. 22:00-06:00, Sat-08:00-18:00 or Fri-18:00-Mon-06:00)")
        XCTAssertEqual(try UploadWindows.parse(["22:00-06:00", "Sat-08:00-18:00"]).text, "22:00-06:00, Sat-08:00-18:00")
    }
}
