import SpoolCore
import Synchronization

/// `--limit-rate` as it stands now: the bytes per second in force, read from its timetable in
/// local time (`RateTimetable`; one rate is a timetable that never changes). The one seam between
/// the timetable and the limiters that enforce it (`BodyRateGate` for URLSession's body reads,
/// libcurl's per-transfer limit): each asks for the rate in force when it meters, instead of
/// holding a rate of its own, so a rate that changes at 18:00 changes for uploads under way.
public final class SendRate: Sendable {
    public let timetable: RateTimetable
    private let zone: LocalZone
    private let now: @Sendable () -> Timestamp
    private let cache = Mutex<Cached?>(nil)

    /// The rate as last read, and until when it holds.
    private struct Cached {
        var bytesPerSecond: Int64?
        var readAt: Timestamp
        var until: Timestamp?
    }

    /// The timetable is read again at each change it makes, and at least this often (a clock set
    /// forward, a zone that changed offset without telling).
    static let rereadSeconds = 60.0

    /// - Parameters:
    ///   - zone: the local zone the timetable's times are in.
    ///   - now: the wall clock (a test's own).
    public init(timetable: RateTimetable, zone: LocalZone = .system, now: @escaping @Sendable () -> Timestamp = { SystemClock().now() }) {
        (self.timetable, self.zone, self.now) = (timetable, zone, now)
    }

    /// One rate, all the time.
    public convenience init(bytesPerSecond: Int64) {
        self.init(timetable: RateTimetable(bytesPerSecond: bytesPerSecond), zone: .utc)
    }

    /// Bytes per second in force now; nil: no limit (`off`).
    public func bytesPerSecond() -> Int64? {
        let schedule = timetable.schedule
        if schedule.isConstant { return schedule.entries[0].value }
        let now = now()
        return cache.withLock { cached in
            if let held = cached, held.readAt <= now, now < held.until ?? held.readAt.adding(seconds: SendRate.rereadSeconds),
               now < held.readAt.adding(seconds: SendRate.rereadSeconds) {
                return held.bytesPerSecond
            }
            let state = timetable.inForce(at: now, zone: zone)
            cached = Cached(bytesPerSecond: state.bytesPerSecond, readAt: now, until: state.until)
            return state.bytesPerSecond
        }
    }
}
