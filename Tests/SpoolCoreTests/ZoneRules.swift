import SpoolCore

/// Zone rules for the timetable tests, fixed here so no test depends on the machine's zone.
enum ZoneRules {
    /// Central European Time as the EU has kept it since 1996: UTC+1, and UTC+2 (summer time)
    /// from 01:00 UTC on the last Sunday of March to 01:00 UTC on the last Sunday of October. In
    /// 2026 the clock jumps from 02:00 to 03:00 on March 29 and goes back from 03:00 to 02:00 on
    /// October 25.
    static let centralEuropean = LocalZone { second in
        let year = CivilTime(Timestamp(millisecondsSinceEpoch: second * 1000)).year
        func lastSunday(_ month: Int) -> Int64 {
            var day = 31
            while true {
                let start = CivilTime(year: year, month: month, day: day, hour: 1, minute: 0, second: 0, millisecond: 0).timestamp
                let days = start.millisecondsSinceEpoch / 86_400_000
                if (days + 3) % 7 == 6 { return start.millisecondsSinceEpoch / 1000 }  // Monday = 0, so Sunday = 6
                day -= 1
            }
        }
        return second >= lastSunday(3) && second < lastSunday(10) ? 7200 : 3600
    }
}

/// `2026-11-23T08:00:00Z` (a Monday) as a Timestamp.
func utc(_ text: String) -> Timestamp {
    guard let time = Timestamp(iso8601: text) else { preconditionFailure("not a time: \(text)") }
    return time
}
