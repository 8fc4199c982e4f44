@testable import SpoolTransport
import XCTest

/// The rules of `URLSessionTransport`'s attempts that FoundationNetworking imposes, without a session.
final class AttemptPhaseTests: XCTestCase {
    private final class Task {}

    private func sending(_ task: Task) -> AttemptPhase<Task> {
        var phase = AttemptPhase<Task>()
        XCTAssertTrue(phase.taskMade(task))
        return phase
    }

    func testRedirectedTask_isNeverCancelled() {
        let task = Task()
        var phase = sending(task)
        XCTAssertTrue(phase.redirectAsked(task))
        XCTAssertNil(phase.end())
    }

    func testTaskToldToCancel_getsNoRedirectAnswer() {
        for tell in [{ (p: inout AttemptPhase<Task>) in p.end() }, { $0.answerPassedCut() }] {
            let task = Task()
            var phase = sending(task)
            XCTAssertTrue(tell(&phase) === task, "a running task is cancelled")
            XCTAssertFalse(phase.redirectAsked(task))
            XCTAssertNil(phase.end(), "told once")
        }
    }

    func testEndBetweenHops_keepsTheNextTaskFromStarting() {
        var phase = sending(Task())
        phase.taskEnded()
        XCTAssertNil(phase.end(), "no task to cancel between hops")
        XCTAssertFalse(phase.taskMade(Task()))
    }

    func testNextHop_sendsItsOwnTask() {
        let first = Task(), second = Task()
        var phase = sending(first)
        XCTAssertTrue(phase.redirectAsked(first))
        phase.taskEnded()
        XCTAssertTrue(phase.taskMade(second))
        XCTAssertTrue(phase.end() === second)
    }
}
