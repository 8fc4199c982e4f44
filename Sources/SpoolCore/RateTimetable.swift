/// `--limit-rate`: the bytes per second the daemon may send, as one rate or as a timetable in
/// rclone's `--bwlimit` syntax: entries `[WEEKDAY-]HH:MM,RATE` separated by spaces (or `;`),
/// e.g. `08:00,512K 18:00,off` or `Mon-08:00,512K Fri-18:00,off`; a time may have seconds
/// (`HH:MM:SS`, which rclone's has not). Each entry holds from its time
/// until the next; one without a weekday holds every day; the last of the week runs on into the
/// first. A RATE is a size (read by the caller, the project's one size parser) or `off`: no limit.
public struct RateTimetable: Equatable, Sendable {
    /// An entry as given.
    public struct Entry: Equatable, Sendable {
        /// 0 is Monday; nil: every day.
        public var weekday: Int?
        public var secondOfDay: Int
        /// Nil: `off`.
        public var bytesPerSecond: Int64?
    }

    /// Bytes per second from each time on; nil: no limit.
    public let schedule: WeeklySchedule<Int64?>
    /// The entries in the order given; empty for a single rate.
    public let entries: [Entry]

    /// One rate all the time (`--limit-rate 1M`); nil: no limit.
    public init(bytesPerSecond: Int64?) {
        schedule = WeeklySchedule(always: bytesPerSecond)
        entries = []
    }

    private init(entries: [Entry], schedule: WeeklySchedule<Int64?>) {
        (self.entries, self.schedule) = (entries, schedule)
    }

    /// Reads `text`: a single RATE (no comma, no space), or a timetable. `rate` reads a size
    /// (at least one byte); its errors are passed on as they are.
    public static func parse(_ text: String, rate: (String) throws -> Int64) throws -> RateTimetable {
        func value(_ word: Substring) throws -> Int64? {
            if word.lowercased() == "off" { return nil }
            if word.contains(":") {
                throw ScheduleSyntaxError("'\(word)' is an upload:download pair; spoold only uploads: give one rate")
            }
            return try rate(String(word))
        }
        let trimmed = text.split(whereSeparator: ScheduleSyntaxError.isSeparator)
        guard !trimmed.isEmpty else {
            throw ScheduleSyntaxError("nothing given (a rate such as 1M, or a timetable such as '08:00,512K 18:00,off')")
        }
        if trimmed.count == 1 && !text.contains(",") { return RateTimetable(bytesPerSecond: try value(trimmed[0])) }
        var entries: [Entry] = []
        var bySecond: [Int: (Entry, Substring)] = [:]
        for word in trimmed {
            let parts = word.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[1].isEmpty else {
                throw ScheduleSyntaxError("'\(word)' is not an entry [WEEKDAY-]HH:MM,RATE (e.g. 08:00,512K or Mon-08:00,off)")
            }
            let time = try ScheduleSyntaxError.weeklyTime(parts[0], in: word)
            let entry = Entry(weekday: time.weekday, secondOfDay: time.secondOfDay, bytesPerSecond: try value(parts[1]))
            for day in time.weekday.map({ [$0] }) ?? Array(0..<7) {
                let second = day * WeekClock.secondsPerDay + time.secondOfDay
                if let (_, earlier) = bySecond[second] {
                    throw ScheduleSyntaxError(
                        "'\(earlier)' and '\(word)' both set the rate at \(WeekClock.dayNames[day]) \(WeekClock.clockText(time.secondOfDay))")
                }
                bySecond[second] = (entry, word)
            }
            entries.append(entry)
        }
        let schedule = WeeklySchedule(bySecond.map { WeeklySchedule.Entry(secondOfWeek: $0.key, value: $0.value.0.bytesPerSecond) })
        return RateTimetable(entries: entries, schedule: schedule)
    }

    /// The rate in force at `time` (nil: no limit) and when it next changes (nil: never).
    public func inForce(at time: Timestamp, zone: LocalZone) -> (bytesPerSecond: Int64?, until: Timestamp?) {
        let state = schedule.inForce(at: time, zone: zone)
        return (state.value, state.until)
    }

    /// The timetable as it was read, each rate written by `format` (the start-up line says each
    /// size back exactly): `08:00 512 KiB/s, 18:00 off`, or a single rate.
    public func text(rate format: (Int64) -> String) -> String {
        func rate(_ value: Int64?) -> String { value.map(format) ?? "off" }
        guard !entries.isEmpty else { return rate(schedule.entries[0].value) }
        return entries.map { entry in
            (entry.weekday.map { WeekClock.dayNames[$0] + "-" } ?? "") + WeekClock.clockText(entry.secondOfDay) + " "
                + rate(entry.bytesPerSecond)
        }.joined(separator: ", ")
    }
}

/// A timetable (`--limit-rate`, `--upload-window`) that cannot be read: what is wrong, for the
/// option's usage error.
public struct ScheduleSyntaxError: Error, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    /// Entries are separated by spaces or `;` (as rclone's).
    static func isSeparator(_ character: Character) -> Bool { character == " " || character == ";" || character == "\t" }

    /// `[WEEKDAY-]HH:MM[:SS]` of `word`.
    static func weeklyTime(_ text: Substring, in word: Substring) throws -> (weekday: Int?, secondOfDay: Int) {
        let pieces = text.split(separator: "-", omittingEmptySubsequences: false)
        guard pieces.count <= 2 else { throw ScheduleSyntaxError("'\(word)': '\(text)' is not a time [WEEKDAY-]HH:MM") }
        var weekday: Int?
        if pieces.count == 2 {
            guard let day = WeekClock.weekday(pieces[0]) else {
                throw ScheduleSyntaxError("'\(word)': '\(pieces[0])' is not a weekday (Mon ... Sun, or Monday ... Sunday)")
            }
            weekday = day
        }
        guard let second = WeekClock.secondOfDay(pieces[pieces.count - 1]) else {
            throw ScheduleSyntaxError("'\(word)': '\(pieces[pieces.count - 1])' is not a time HH:MM (00:00 to 23:59) or HH:MM:SS")
        }
        return (weekday, second)
    }
}
