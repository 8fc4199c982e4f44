import SpoolCore
import XCTest

/// `--limit-rate` as a timetable (rclone's `--bwlimit` syntax), read in local time.
final class RateTimetableTests: XCTestCase {
    /// Sizes as the CLI reads them (`ByteUnits`), reduced to what these tests use.
    private struct NotASize: Error {}
    private static func size(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20]
        if let unit = text.last.flatMap({ units[$0] }), let number = Int64(text.dropLast()) { return number * unit }
        guard let number = Int64(text), number > 0 else { throw NotASize() }
        return number
    }

    private func parse(_ text: String) throws -> RateTimetable { try RateTimetable.parse(text, rate: Self.size) }

    private func rate(_ text: String, at time: String, zone: LocalZone = .utc) throws -> (Int64?, Timestamp?) {
        let state = try parse(text).inForce(at: utc(time), zone: zone)
        return (state.bytesPerSecond, state.until)
    }

    func testOneRate_holdsAllTheTime() throws {
        let one = try parse("1M")
        XCTAssertEqual(one, RateTimetable(bytesPerSecond: 1 << 20))
        XCTAssertTrue(one.schedule.isConstant)
        XCTAssertNil(one.inForce(at: utc("2026-11-23T08:00:00Z"), zone: .utc).until, "never changes")
        XCTAssertEqual(try parse("off"), RateTimetable(bytesPerSecond: nil))
        XCTAssertEqual(try parse(" 512K "), RateTimetable(bytesPerSecond: 512 << 10))
    }

    /// `08:00,512K 18:00,off`: every day 512 KiB/s from 08:00, no limit from 18:00 until 08:00.
    func testADailyTimetable_changesAtItsTimes_andWrapsOverMidnight() throws {
        let text = "08:00,512K 18:00,off"
        var (bytes, until) = try rate(text, at: "2026-11-23T07:59:59.999Z")
        XCTAssertNil(bytes, "before 08:00: the evening's entry of the day before")
        XCTAssertEqual(until, utc("2026-11-23T08:00:00Z"))
        (bytes, until) = try rate(text, at: "2026-11-23T08:00:00Z")
        XCTAssertEqual(bytes, 512 << 10)
        XCTAssertEqual(until, utc("2026-11-23T18:00:00Z"))
        (bytes, until) = try rate(text, at: "2026-11-23T18:00:00Z")
        XCTAssertNil(bytes)
        XCTAssertEqual(until, utc("2026-11-24T08:00:00Z"), "the next morning")
        (bytes, _) = try rate(text, at: "2026-11-29T12:00:00Z")
        XCTAssertEqual(bytes, 512 << 10, "a Sunday too")
    }

    /// `Mon-08:00,512K Fri-18:00,off`: limited from Monday morning to Friday evening.
    func testAWeeklyTimetable_holdsFromItsWeekdayOn() throws {
        let text = "Mon-08:00,512K Fri-18:00,off"
        var (bytes, until) = try rate(text, at: "2026-11-22T12:00:00Z")  // a Sunday
        XCTAssertNil(bytes)
        XCTAssertEqual(until, utc("2026-11-23T08:00:00Z"), "Monday 08:00")
        (bytes, until) = try rate(text, at: "2026-11-25T23:00:00Z")  // Wednesday night
        XCTAssertEqual(bytes, 512 << 10)
        XCTAssertEqual(until, utc("2026-11-27T18:00:00Z"), "Friday 18:00")
        // Whole names, any case, and `;` between entries (rclone takes both).
        XCTAssertEqual(try parse("monday-08:00,512K;FRIDAY-18:00,off").schedule, try parse(text).schedule)
    }

    /// rclone's example: entries without a weekday hold every day, among those with one.
    func testDailyAndWeeklyEntries_mix() throws {
        let table = try parse("Mon-00:00,512 12:00,1M Sun-20:00,off")
        XCTAssertEqual(table.inForce(at: utc("2026-11-23T11:00:00Z"), zone: .utc).bytesPerSecond, 512, "Monday morning")
        XCTAssertEqual(table.inForce(at: utc("2026-11-24T11:00:00Z"), zone: .utc).bytesPerSecond, 1 << 20, "Tuesday morning: Monday noon's runs on")
        XCTAssertEqual(table.inForce(at: utc("2026-11-29T13:00:00Z"), zone: .utc).bytesPerSecond, 1 << 20, "every day from noon, Sunday too")
        XCTAssertNil(table.inForce(at: utc("2026-11-29T21:00:00Z"), zone: .utc).bytesPerSecond, "Sunday night")
        XCTAssertEqual(table.text { "\($0) B/s" }, "Mon-00:00 512 B/s, 12:00 1048576 B/s, Sun-20:00 off")
    }

    /// Local time: 08:00 in Kolkata (UTC+05:30) is 02:30 UTC.
    func testTheTimes_areLocal() throws {
        let kolkata = LocalZone.fixed(secondsEast: 19_800)
        let (bytes, until) = try rate("08:00,512K 18:00,off", at: "2026-11-23T02:29:00Z", zone: kolkata)
        XCTAssertNil(bytes)
        XCTAssertEqual(until, utc("2026-11-23T02:30:00Z"))
    }

    /// Summer time begins on 2026-03-29 (Central Europe): the day's 08:00 comes an hour earlier
    /// in UTC, and a time the clock skips (02:30) takes effect as it jumps.
    func testSummerTimeBegins_theRateChangesAtTheLocalTimes() throws {
        let zone = ZoneRules.centralEuropean
        var (bytes, until) = try rate("08:00,512K 20:00,off", at: "2026-03-28T07:30:00Z", zone: zone)
        XCTAssertEqual(bytes, 512 << 10, "08:30 winter time")
        XCTAssertEqual(until, utc("2026-03-28T19:00:00Z"), "20:00 winter time")
        (bytes, until) = try rate("08:00,512K 20:00,off", at: "2026-03-28T21:00:00Z", zone: zone)
        XCTAssertNil(bytes)
        XCTAssertEqual(until, utc("2026-03-29T06:00:00Z"), "08:00 summer time")
        (bytes, until) = try rate("02:30,1M 05:00,off", at: "2026-03-29T00:30:00Z", zone: zone)
        XCTAssertNil(bytes, "01:30 winter time")
        XCTAssertEqual(until, utc("2026-03-29T01:00:00Z"), "02:30 is skipped: it takes effect at the jump")
        (bytes, until) = try rate("02:30,1M 05:00,off", at: "2026-03-29T01:00:00Z", zone: zone)
        XCTAssertEqual(bytes, 1 << 20, "03:00 summer time")
        XCTAssertEqual(until, utc("2026-03-29T03:00:00Z"))
    }

    /// Summer time ends on 2026-10-25: the clock reads 02:00-03:00 twice; 02:30 takes effect the
    /// first time and the second pass does not undo it.
    func testSummerTimeEnds_theRepeatedHourIsPassedOnce() throws {
        let zone = ZoneRules.centralEuropean
        let text = "02:30,1M 06:00,off"
        var (bytes, until) = try rate(text, at: "2026-10-25T00:10:00Z", zone: zone)
        XCTAssertNil(bytes, "02:10 summer time")
        XCTAssertEqual(until, utc("2026-10-25T00:30:00Z"), "02:30 summer time")
        (bytes, until) = try rate(text, at: "2026-10-25T01:10:00Z", zone: zone)
        XCTAssertEqual(bytes, 1 << 20, "02:10 winter time, the second pass: 02:30 was passed already")
        XCTAssertEqual(until, utc("2026-10-25T05:00:00Z"), "06:00 winter time")
    }

    func testWhatIsNotATimetable_isRefusedWithTheReason() {
        func problem(_ text: String) -> String {
            do {
                _ = try parse(text)
                return "accepted"
            } catch let error as ScheduleSyntaxError {
                return error.description
            } catch {
                return "size: \(error)"
            }
        }
        XCTAssertEqual(problem(""), "nothing given (a rate such as 1M, or a timetable such as '08:00,512K 18:00,off')")
        XCTAssertEqual(problem(" ; "), "nothing given (a rate such as 1M, or a timetable such as '08:00,512K 18:00,off')")
        XCTAssertEqual(problem("25:00,1M"), "'25:00,1M': '25:00' is not a time HH:MM (00:00 to 23:59) or HH:MM:SS")
        XCTAssertEqual(problem("08:00:60,1M"), "'08:00:60,1M': '08:00:60' is not a time HH:MM (00:00 to 23:59) or HH:MM:SS")
        XCTAssertEqual(try parse("08:00:30,1K 08:00:45,off").inForce(at: utc("2026-11-23T08:00:31Z"), zone: .utc).until,
                       utc("2026-11-23T08:00:45Z"), "times may have seconds")
        XCTAssertEqual(problem("8:00,1M"), "'8:00,1M': '8:00' is not a time HH:MM (00:00 to 23:59) or HH:MM:SS")
        XCTAssertEqual(problem("Fun-08:00,1M"), "'Fun-08:00,1M': 'Fun' is not a weekday (Mon ... Sun, or Monday ... Sunday)")
        XCTAssertEqual(problem("08:00 18:00,off"), "'08:00' is not an entry [WEEKDAY-]HH:MM,RATE (e.g. 08:00,512K or Mon-08:00,off)")
        XCTAssertEqual(problem("08:00,"), "'08:00,' is not an entry [WEEKDAY-]HH:MM,RATE (e.g. 08:00,512K or Mon-08:00,off)")
        XCTAssertEqual(problem("08:00,1M:100K"), "'1M:100K' is an upload:download pair; spoold only uploads: give one rate")
        XCTAssertEqual(problem("08:00,1M 08:00,2M"), "'08:00,1M' and '08:00,2M' both set the rate at Mon 08:00")
        XCTAssertEqual(problem("Tue-08:00,1M 08:00,2M"), "'Tue-08:00,1M' and '08:00,2M' both set the rate at Tue 08:00")
        XCTAssertEqual(problem("08:00,2X"), "size: NotASize()", "the size parser's own error, as it is")
        XCTAssertEqual(problem("1M 2M"), "'1M' is not an entry [WEEKDAY-]HH:MM,RATE (e.g. 08:00,512K or Mon-08:00,off)")
    }
}
