import SpoolCore

/// The rate timetable (README "A rate timetable"), read in local time
/// (`RateTimetable`, `LocalZone`): the transport enforces the rate in force by itself
/// (`SendRate`); here the engine says when it changes, and what it is (log, metrics).
extension Engine {
    /// The `--limit-rate` in force as last said.
    struct RateState {
        var bytesPerSecond: Int64?
        var until: Timestamp?
        var readAt: Timestamp
    }

    /// A timetable is read again at least this often (a clock set forward, a zone that changed).
    static let timetableRereadSeconds = 60.0

    /// The `--limit-rate` in force at `now` (bytes per second; nil: no limit).
    public func limitRateInForce(now: Timestamp) -> Int64? {
        configuration.limitRate?.inForce(at: now, zone: configuration.zone).bytesPerSecond
    }

    /// Says when the `--limit-rate` in force changes (the transport changes it by itself,
    /// `SendRate`): once at the start and at each change of a timetable.
    func noteLimitRate(now: Timestamp) {
        guard let timetable = configuration.limitRate, !timetable.schedule.isConstant else { return }
        if let shown = shownRate, Engine.isFresh(readAt: shown.readAt, until: shown.until, now: now) { return }
        let state = timetable.inForce(at: now, zone: configuration.zone)
        let previous = shownRate
        shownRate = RateState(bytesPerSecond: state.bytesPerSecond, until: state.until, readAt: now)
        guard previous == nil || previous?.bytesPerSecond != state.bytesPerSecond else { return }
        let rate = state.bytesPerSecond.map { "\(ByteText.format($0))/s" } ?? "off (no limit)"
        let until = state.until.map { " until \(localClockText($0, now: now))" } ?? ""
        log.info("--limit-rate now \(rate)\(until)")
    }

    /// `time` on the local clock: `22:00`, or `Sat 08:00` a day or more after `now`.
    public func localClockText(_ time: Timestamp, now: Timestamp) -> String {
        let zone = configuration.zone
        return WeekClock.text(zone.localMilliseconds(at: time), from: zone.localMilliseconds(at: now))
    }

    /// When the timetable must be read again: at its next change, or a minute on.
    var nextTimetableRead: Timestamp? {
        [shownRate.map { ($0.readAt, $0.until) }].compactMap { $0 }
            .map { read in min(read.1 ?? read.0.adding(seconds: Engine.timetableRereadSeconds), read.0.adding(seconds: Engine.timetableRereadSeconds)) }
            .min()
    }

    /// What was read at `readAt` and holds until `until` still holds at `now`.
    static func isFresh(readAt: Timestamp, until: Timestamp?, now: Timestamp) -> Bool {
        readAt <= now && now < readAt.adding(seconds: timetableRereadSeconds) && until.map { now < $0 } ?? true
    }
}
