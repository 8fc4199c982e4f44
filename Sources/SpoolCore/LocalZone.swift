/// The local time zone's rule, as the timetables read it (`--limit-rate`, `--upload-window`): how
/// many seconds east of UTC the wall clock is at an instant, summer time included. The core knows
/// no zone database: the adapter asks the C library (`localtime_r`), tests give a fixed rule.
///
/// Times in local time are "local milliseconds": the wall clock's reading as a count of
/// milliseconds since 1970-01-01 00:00 on that clock (an instant plus its offset).
///
/// When summer time begins the wall clock skips an hour: a time in it is reached when the clock
/// jumps over it. When summer time ends the clock reads an hour again: the rules are read against
/// the furthest the clock has read (`ruleMilliseconds`), so a time in the repeated hour is passed
/// once, the first time, and what was in force at the end of the first pass holds through the
/// second. Each time given in a timetable is so passed exactly once a day, as cron runs a job.
public struct LocalZone: Sendable {
    private let east: @Sendable (_ secondsSinceEpoch: Int64) -> Int

    /// - Parameter secondsEast: the offset from UTC in force at a second since the epoch
    ///   (positive east of Greenwich: 3600 for Central European Time).
    public init(secondsEast: @escaping @Sendable (_ secondsSinceEpoch: Int64) -> Int) {
        east = secondsEast
    }

    /// UTC all year.
    public static let utc = LocalZone { _ in 0 }

    /// A zone `seconds` east of UTC all year.
    public static func fixed(secondsEast seconds: Int) -> LocalZone { LocalZone { _ in seconds } }

    /// How far back a clock that went back is still looked for (summer time ends: an hour;
    /// a zone that moved its standard time: up to a few).
    static let lookbackSeconds: Int64 = 3 * 3600

    /// The offset from UTC in force at `time`, in seconds.
    public func secondsEast(at time: Timestamp) -> Int { east(LocalZone.floorDiv(time.millisecondsSinceEpoch, 1000)) }

    /// The wall clock's reading at `time`.
    public func localMilliseconds(at time: Timestamp) -> Int64 {
        time.millisecondsSinceEpoch + Int64(secondsEast(at: time)) * 1000
    }

    /// The reading the rules are read against at `time`: the wall clock's, or, for a while after
    /// the clock went back, the furthest it read before (so the repeated hour changes nothing).
    public func ruleMilliseconds(at time: Timestamp) -> Int64 {
        let local = localMilliseconds(at: time)
        let second = LocalZone.floorDiv(time.millisecondsSinceEpoch, 1000)
        let earlier = second - LocalZone.lookbackSeconds
        let before = east(earlier)
        guard before > east(second) else { return local }
        // The clock went back between `earlier` and now: the last second it read on the old offset.
        let change = firstSecond(after: earlier, upTo: second, differingFrom: before)
        return max(local, change * 1000 - 1 + Int64(before) * 1000)
    }

    /// The first instant at or after `time` at which the wall clock reads `local` or later: the
    /// instant a time given in local time takes effect. A time the clock skips takes effect when
    /// it jumps over it; a time it reads twice, the first time.
    public func firstInstant(reaching local: Int64, from time: Timestamp) -> Timestamp {
        var start = time.millisecondsSinceEpoch
        // Each turn either answers or moves past one change of offset; a week holds at most a few.
        for _ in 0..<8 {
            let offset = Int64(east(LocalZone.floorDiv(start, 1000))) * 1000
            if start + offset >= local { return Timestamp(millisecondsSinceEpoch: start) }
            let candidate = local - offset
            let candidateSecond = LocalZone.floorDiv(candidate, 1000)
            if Int64(east(candidateSecond)) * 1000 == offset { return Timestamp(millisecondsSinceEpoch: candidate) }
            // The offset changes on the way: go on from where it does.
            let change = firstSecond(
                after: LocalZone.floorDiv(start, 1000), upTo: candidateSecond, differingFrom: Int(offset / 1000))
            start = max(start + 1, change * 1000)
        }
        return Timestamp(millisecondsSinceEpoch: start)
    }

    /// The first second in (`low`, `high`] whose offset is not `offset`, given that `low`'s is
    /// and `high`'s is not (bisection: the zone's rule is a step function).
    private func firstSecond(after low: Int64, upTo high: Int64, differingFrom offset: Int) -> Int64 {
        var (low, high) = (low, high)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if east(middle) == offset { low = middle } else { high = middle }
        }
        return high
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
