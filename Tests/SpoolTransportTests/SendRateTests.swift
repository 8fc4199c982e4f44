import SpoolCore
import Synchronization
import XCTest

@testable import SpoolTransport

/// The seam between the `--limit-rate` timetable and the limiters: the rate in force, read again
/// at each change (a manual wall clock here), and the URLSession gate that meters by it.
final class SendRateTests: XCTestCase {
    /// A wall clock that moves when told.
    private final class WallClock: Sendable {
        let time = Mutex(Timestamp(iso8601: "2026-11-23T07:59:00Z")!)
        func now() -> Timestamp { time.withLock { $0 } }
    }

    private let clock = WallClock()

    private func rate(_ text: String) throws -> SendRate {
        let timetable = try RateTimetable.parse(text) { text in
            guard let number = Int64(text) else { throw ScheduleSyntaxError("not a number") }
            return number
        }
        return SendRate(timetable: timetable, zone: .utc, now: { [clock] in clock.now() })
    }

    private func set(_ time: String) { clock.time.withLock { $0 = Timestamp(iso8601: time)! } }

    func testTheRateInForce_changesAtTheTimesGiven() throws {
        let rate = try rate("08:00,40000 18:00,off")
        XCTAssertNil(rate.bytesPerSecond(), "07:59: no limit")
        set("2026-11-23T08:00:00Z")
        XCTAssertEqual(rate.bytesPerSecond(), 40_000, "read again at 08:00")
        set("2026-11-23T17:59:59.999Z")
        XCTAssertEqual(rate.bytesPerSecond(), 40_000)
        set("2026-11-23T18:00:00Z")
        XCTAssertNil(rate.bytesPerSecond())
    }

    /// What was read holds until the next change, unless the clock goes back past it.
    func testAClockSetBack_readsTheTimetableAgain() throws {
        let rate = try rate("08:00,40000 18:00,off")
        set("2026-11-23T09:00:00Z")
        XCTAssertEqual(rate.bytesPerSecond(), 40_000)
        set("2026-11-23T07:00:00Z")
        XCTAssertNil(rate.bytesPerSecond())
    }

    /// The gate lets a read through whole while the timetable says off, and meters it (50 ms of
    /// the rate at a time) once a rate is in force.
    func testTheGate_passesEverythingWhileOff_andMetersFromTheChangeOn() throws {
        let gate = BodyRateGate(rate: try rate("08:00,40000 18:00,off"))
        XCTAssertEqual(gate.take(upTo: 1 << 20), 1 << 20, "no limit before 08:00")
        XCTAssertEqual(gate.longestTurnSeconds(readers: 4), 0)
        set("2026-11-23T08:00:00Z")
        XCTAssertEqual(gate.take(upTo: 1 << 20), 2_000, "a full bucket: 50 ms at 40,000 B/s")
        XCTAssertEqual(gate.longestTurnSeconds(readers: 4), 0.2, accuracy: 1e-9)
        set("2026-11-23T18:00:00Z")
        XCTAssertEqual(gate.take(upTo: 1 << 20), 1 << 20, "off again")
    }
}
