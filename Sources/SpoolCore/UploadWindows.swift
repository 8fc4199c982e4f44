/// `--upload-window`: the times of the week uploads may be sent, in local time; outside them the
/// daemon holds its uploads (files are still taken in). A window is `START-END`, each end
/// `[WEEKDAY-]HH:MM` (or `HH:MM:SS`) as in the `--limit-rate` timetable:
///
/// - `22:00-06:00`: every day from 22:00 to 06:00 the next morning (a window may span midnight);
/// - `Sat-08:00-18:00`: every Saturday from 08:00 to 18:00 (the end is the first 18:00 after);
/// - `Fri-18:00-Mon-06:00`: from Friday 18:00 to Monday 06:00.
///
/// A window holds from its start up to (not including) its end; one that ends where it starts
/// lasts a whole day (or week, with weekdays). Several windows (repeated options, or separated by
/// spaces or `;`) add up.
public struct UploadWindows: Equatable, Sendable {
    /// A window as given, in seconds of the week.
    public struct Window: Equatable, Sendable {
        /// Where it opens (seconds since Monday 00:00) and how long it lasts, each day or each week.
        public var start: Int
        public var seconds: Int
        /// Every day (no weekday given), else every week.
        public var daily: Bool
        /// As given.
        public var text: String
    }

    public let windows: [Window]
    /// Open (true) or not, from each change on.
    public let schedule: WeeklySchedule<Bool>

    /// Reads each of `texts` (one option's value each), every window in them.
    public static func parse(_ texts: [String]) throws -> UploadWindows {
        var windows: [Window] = []
        for text in texts {
            let words = text.split(whereSeparator: ScheduleSyntaxError.isSeparator)
            guard !words.isEmpty else { throw ScheduleSyntaxError("nothing given (a window such as 22:00-06:00)") }
            for word in words { windows.append(try window(word)) }
        }
        guard !windows.isEmpty else { throw ScheduleSyntaxError("nothing given (a window such as 22:00-06:00)") }
        return UploadWindows(windows: windows)
    }

    private init(windows: [Window]) {
        self.windows = windows
        // Every window in seconds of the week: a daily one seven times.
        let spans = windows.flatMap { window in
            window.daily
                ? (0..<7).map { (start: $0 * WeekClock.secondsPerDay + window.start, seconds: window.seconds) }
                : [(start: window.start, seconds: window.seconds)]
        }
        // Open or not at each time a window opens or closes.
        var times = Set<Int>()
        for span in spans {
            times.insert(span.start)
            times.insert((span.start + span.seconds) % WeekClock.secondsPerWeek)
        }
        schedule = WeeklySchedule(times.map { time in
            let open = spans.contains { span in
                (time - span.start + WeekClock.secondsPerWeek) % WeekClock.secondsPerWeek < span.seconds
            }
            return WeeklySchedule.Entry(secondOfWeek: time, value: open)
        })
    }

    /// One window, `[WEEKDAY-]HH:MM-[WEEKDAY-]HH:MM`.
    static func window(_ word: Substring) throws -> Window {
        let pieces = word.split(separator: "-", omittingEmptySubsequences: false)
        let ends: (start: Substring, end: Substring)
        switch pieces.count {
        case 2: ends = (pieces[0], pieces[1])
        case 3 where WeekClock.secondOfDay(pieces[0]) != nil: ends = (pieces[0], word[pieces[1].startIndex..<pieces[2].endIndex])
        case 3: ends = (word[pieces[0].startIndex..<pieces[1].endIndex], pieces[2])
        case 4: ends = (word[pieces[0].startIndex..<pieces[1].endIndex], word[pieces[2].startIndex..<pieces[3].endIndex])
        default:
            throw ScheduleSyntaxError("'\(word)' is not a window START-END (e.g. 22:00-06:00, Sat-08:00-18:00 or Fri-18:00-Mon-06:00)")
        }
        let start = try ScheduleSyntaxError.weeklyTime(ends.start, in: word)
        let end = try ScheduleSyntaxError.weeklyTime(ends.end, in: word)
        if start.weekday == nil && end.weekday != nil {
            throw ScheduleSyntaxError("'\(word)': a window with a weekday at its end needs one at its start")
        }
        let text = String(word)
        /// From `from` to `to` seconds, the first `to` after `from`, in a cycle of `period`.
        func length(_ from: Int, _ to: Int, _ period: Int) -> Int {
            let seconds = (to - from + period) % period
            return seconds == 0 ? period : seconds
        }
        guard let startDay = start.weekday else {
            return Window(
                start: start.secondOfDay, seconds: length(start.secondOfDay, end.secondOfDay, WeekClock.secondsPerDay), daily: true,
                text: text)
        }
        let opens = startDay * WeekClock.secondsPerDay + start.secondOfDay
        guard let endDay = end.weekday else {
            return Window(
                start: opens, seconds: length(start.secondOfDay, end.secondOfDay, WeekClock.secondsPerDay), daily: false, text: text)
        }
        let closes = endDay * WeekClock.secondsPerDay + end.secondOfDay
        return Window(start: opens, seconds: length(opens, closes, WeekClock.secondsPerWeek), daily: false, text: text)
    }

    /// Whether uploads may go at `time` in `zone`, and when that next changes (nil: never, the
    /// windows cover the whole week).
    public func inForce(at time: Timestamp, zone: LocalZone) -> (open: Bool, until: Timestamp?) {
        let state = schedule.inForce(at: time, zone: zone)
        return (state.value, state.until)
    }

    /// The windows as given: `22:00-06:00, Sat-08:00-18:00`.
    public var text: String { windows.map(\.text).joined(separator: ", ") }
}
