import SpoolCore
import XCTest

/// The intake pause on a full disk: said once when it starts and once when it ends, retried on a
/// timer and at once after space was freed.
final class IntakeGateTests: XCTestCase {
    private let t0 = Timestamp(millisecondsSinceEpoch: 1_000_000)

    func testOpenGate_mayAlwaysTry_andHasNoWakeTime() {
        let gate = IntakeGate()
        XCTAssertTrue(gate.mayTry(now: t0))
        XCTAssertNil(gate.pausedSince)
        XCTAssertNil(gate.nextTry)
    }

    func testNoRoom_pausesOnce_andRetriesOnATimer() {
        var gate = IntakeGate()
        XCTAssertTrue(gate.foundNoRoom(now: t0), "the first failure starts the pause (logged)")
        XCTAssertEqual(gate.pausedSince, t0)
        XCTAssertFalse(gate.mayTry(now: t0.adding(seconds: IntakeGate.retrySeconds - 0.001)))
        XCTAssertTrue(gate.mayTry(now: t0.adding(seconds: IntakeGate.retrySeconds)))
        let later = t0.adding(seconds: IntakeGate.retrySeconds)
        XCTAssertFalse(gate.foundNoRoom(now: later), "a failed retry is not a new pause (not logged again)")
        XCTAssertEqual(gate.pausedSince, t0, "the pause keeps its start")
        XCTAssertEqual(gate.nextTry, later.adding(seconds: IntakeGate.retrySeconds))
    }

    func testSpaceFreed_triesAtOnce_onlyWhilePaused() {
        var gate = IntakeGate()
        gate.spaceFreed()
        XCTAssertNil(gate.pausedSince, "freed space does not pause an open gate")
        _ = gate.foundNoRoom(now: t0)
        gate.spaceFreed()
        XCTAssertTrue(gate.mayTry(now: t0))
        XCTAssertNil(gate.nextTry, "the engine wakes at once")
        XCTAssertEqual(gate.pausedSince, t0)
    }

    func testRoom_endsThePauseOnce() {
        var gate = IntakeGate()
        XCTAssertNil(gate.foundRoom(), "nothing to say while open")
        _ = gate.foundNoRoom(now: t0)
        XCTAssertEqual(gate.foundRoom(), t0, "the end of the pause is said once, with its start")
        XCTAssertNil(gate.foundRoom())
        XCTAssertEqual(gate, IntakeGate())
    }
}
