@testable import SpoolTransport
import XCTest

/// The rules of `URLSessionTransport`'s attempts that FoundationNetworking imposes, without a session.
final class AttemptPhaseTests: XCTestCase {
    private final class Task {}

    private func sending(_ task: Task) -> AttemptPhase<Task> {
        var phase = AttemptPhase<Task>()
        XCTAssertNil(phase.taskMade(task))
        return phase
    }

    func testRedirectedTask_isNeverCancelled() {
        let task = Task()
        var phase = sending(task)
        XCTAssertTrue(phase.redirectAsked(task))
        XCTAssertNil(phase.cancel())
        XCTAssertNil(phase.timeOut())
        XCTAssertEqual(phase.stop, .timedOut)
    }

    func testTaskToldToCancel_getsNoRedirectAnswer() {
        for tell in [{ (p: inout AttemptPhase<Task>) in p.cancel() }, { $0.timeOut() }, { $0.answerPassedCut() }] {
            let task = Task()
            var phase = sending(task)
            XCTAssertTrue(tell(&phase) === task, "a running task is cancelled")
            XCTAssertFalse(phase.redirectAsked(task))
            XCTAssertNil(phase.cancel(), "told once")
        }
    }

    func testDeadline_winsOverCancel_eitherOrder() {
        var cancelledFirst = sending(Task())
        _ = cancelledFirst.cancel()
        XCTAssertNil(cancelledFirst.timeOut(), "already told to cancel")
        XCTAssertEqual(cancelledFirst.taskEnded(), .timedOut)

        var timedOutFirst = sending(Task())
        _ = timedOutFirst.timeOut()
        XCTAssertNil(timedOutFirst.cancel())
        XCTAssertEqual(timedOutFirst.taskEnded(), .timedOut)
    }

    func testStopBetweenHops_keepsTheNextTaskFromStarting() {
        var phase = sending(Task())
        XCTAssertNil(phase.taskEnded())
        XCTAssertNil(phase.cancel(), "no task to cancel between hops")
        XCTAssertEqual(phase.taskMade(Task()), .cancelled)
    }

    func testNextHop_sendsItsOwnTask() {
        let first = Task(), second = Task()
        var phase = sending(first)
        XCTAssertTrue(phase.redirectAsked(first))
        XCTAssertNil(phase.taskEnded())
        XCTAssertNil(phase.taskMade(second))
        XCTAssertTrue(phase.timeOut() === second)
    }
}
