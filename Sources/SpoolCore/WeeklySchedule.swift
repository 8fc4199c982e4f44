/// A value that changes at given times of the week, in local time: each entry holds from its
/// weekday and time until the next, and the last of the week runs on into the first (as
/// rclone's `--bwlimit` timetable reads). The rule under `--limit-rate` (a rate) and
/// `--upload-window` (open or not): it answers what is in force at an instant, and until when.
public struct WeeklySchedule<Value: Equatable & Sendable>: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        /// Seconds since Monday 00:00 (0 ..< 604800).
        public var secondOfWeek: Int
        public var value: Value

        public init(secondOfWeek: Int, value: Value) {
            (self.secondOfWeek, self.value) = (secondOfWeek, value)
        }
    }

    /// Sorted by time, no two at one time, each one a change from the one before (the last
    /// before the first): never empty.
    public let entries: [Entry]

    /// The same value all week.
    public init(always value: Value) { entries = [Entry(secondOfWeek: 0, value: value)] }

    /// From entries in any order, at distinct times (`precondition`), at least one; entries that
    /// change nothing (the same value as the one before) are dropped.
    public init(_ given: [Entry]) {
        precondition(!given.isEmpty, "a schedule needs an entry")
        let sorted = given.sorted { $0.secondOfWeek < $1.secondOfWeek }
        for (a, b) in zip(sorted, sorted.dropFirst()) { precondition(a.secondOfWeek != b.secondOfWeek, "two entries at one time") }
        precondition(sorted.allSatisfy { (0..<WeekClock.secondsPerWeek).contains($0.secondOfWeek) }, "a second of the week")
        var changes = sorted.enumerated().filter { n, entry in
            entry.value != sorted[(n + sorted.count - 1) % sorted.count].value
        }.map(\.element)
        if changes.isEmpty { changes = [Entry(secondOfWeek: 0, value: sorted[0].value)] }
        entries = changes
    }

    /// Never changes.
    public var isConstant: Bool { entries.count == 1 }

    /// The value at the local time `local` (local milliseconds, `LocalZone`).
    public func value(atLocal local: Int64) -> Value {
        let second = Int(WeekClock.millisecondOfWeek(local) / 1000)
        return (entries.last { $0.secondOfWeek <= second } ?? entries[entries.count - 1]).value
    }

    /// The first local time after `local` at which the value changes, or nil if it never does.
    public func nextChange(afterLocal local: Int64) -> Int64? {
        guard !isConstant else { return nil }
        let position = WeekClock.millisecondOfWeek(local)
        let weekStart = local - position
        if let next = entries.first(where: { Int64($0.secondOfWeek) * 1000 > position }) {
            return weekStart + Int64(next.secondOfWeek) * 1000
        }
        return weekStart + WeekClock.millisecondsPerWeek + Int64(entries[0].secondOfWeek) * 1000
    }

    /// What is in force at `time` in `zone`, and the instant it next changes (nil: never).
    public func inForce(at time: Timestamp, zone: LocalZone) -> (value: Value, until: Timestamp?) {
        let local = zone.ruleMilliseconds(at: time)
        let value = value(atLocal: local)
        guard let next = nextChange(afterLocal: local) else { return (value, nil) }
        return (value, zone.firstInstant(reaching: next, from: time))
    }
}

/// Weekdays and times of the week in local milliseconds (`LocalZone`). Weeks start on Monday.
public enum WeekClock {
    public static let secondsPerDay = 86_400
    public static let secondsPerWeek = 7 * 86_400
    static let millisecondsPerDay: Int64 = 86_400_000
    static let millisecondsPerWeek: Int64 = 7 * 86_400_000
    /// `Mon` ... `Sun`, as the timetables and the status line write them.
    public static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let fullDayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Milliseconds since the Monday 00:00 before `local`.
    static func millisecondOfWeek(_ local: Int64) -> Int64 {
        let day = LocalZone.floorDiv(local, millisecondsPerDay)
        // 1970-01-01 was a Thursday (3 days after a Monday).
        let weekday = (day + 3) % 7
        return local - (day - weekday) * millisecondsPerDay
    }

    /// `22:00`, or `Sat 22:00` when `local` is a day or more after `from` (both local
    /// milliseconds); with the seconds when they are not 0 (`22:00:30`).
    public static func text(_ local: Int64, from: Int64) -> String {
        let secondOfWeek = Int(millisecondOfWeek(local) / 1000)
        let time = clockText(secondOfWeek % secondsPerDay)
        return local - from >= millisecondsPerDay ? "\(dayNames[secondOfWeek / secondsPerDay]) \(time)" : time
    }

    /// `08:05` for second 29100 of a day, `08:05:30` for 29130.
    public static func clockText(_ secondOfDay: Int) -> String {
        func two(_ n: Int) -> String { (n < 10 ? "0" : "") + "\(n)" }
        let (hours, minutes, seconds) = (secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60)
        return "\(two(hours)):\(two(minutes))" + (seconds == 0 ? "" : ":\(two(seconds))")
    }

    /// A weekday by name, as rclone reads them: the whole word or its first three letters, any
    /// case. 0 is Monday.
    static func weekday(_ text: Substring) -> Int? {
        let lower = text.lowercased()
        return dayNames.firstIndex { $0.lowercased() == lower } ?? fullDayNames.firstIndex(of: lower)
    }

    /// Seconds since midnight of `HH:MM`, or `HH:MM:SS` (two digits each, 00:00 to 23:59:59).
    static func secondOfDay(_ text: Substring) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5 || bytes.count == 8 else { return nil }
        var fields: [Int] = []
        for start in stride(from: 0, to: bytes.count, by: 3) {
            guard (48...57).contains(bytes[start]), (48...57).contains(bytes[start + 1]),
                  start + 2 == bytes.count || bytes[start + 2] == UInt8(ascii: ":")
            else { return nil }
            fields.append(Int(bytes[start] - 48) * 10 + Int(bytes[start + 1] - 48))
        }
        let seconds = fields.count == 3 ? fields[2] : 0
        guard fields[0] < 24, fields[1] < 60, seconds < 60 else { return nil }
        return fields[0] * 3600 + fields[1] * 60 + seconds
    }
}
