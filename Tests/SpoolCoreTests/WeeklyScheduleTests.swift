import SpoolCore
import XCTest

final class WeeklyScheduleTests: XCTestCase {
    /// Entries that change nothing are dropped, so each remaining time is a change.
    func testEntriesThatChangeNothing_areDropped() {
        let schedule = WeeklySchedule([
            .init(secondOfWeek: 600, value: 1), .init(secondOfWeek: 0, value: 1), .init(secondOfWeek: 300, value: 2),
        ])
        XCTAssertEqual(schedule.entries.map(\.secondOfWeek), [300, 600])
        XCTAssertTrue(WeeklySchedule([.init(secondOfWeek: 5, value: 1), .init(secondOfWeek: 9, value: 1)]).isConstant)
    }

    func testLocalTimeText_saysTheWeekdayADayOrMoreAhead() {
        let monday = utc("2026-11-23T08:00:00Z").millisecondsSinceEpoch
        XCTAssertEqual(WeekClock.text(utc("2026-11-23T22:00:00Z").millisecondsSinceEpoch, from: monday), "22:00")
        XCTAssertEqual(WeekClock.text(utc("2026-11-24T07:59:00Z").millisecondsSinceEpoch, from: monday), "07:59")
        XCTAssertEqual(WeekClock.text(utc("2026-11-28T08:05:00Z").millisecondsSinceEpoch, from: monday), "Sat 08:05")
        XCTAssertEqual(WeekClock.text(utc("2026-11-23T08:00:07Z").millisecondsSinceEpoch, from: monday), "08:00:07")
    }
}
