import SpoolCore
import SpoolEngine
import SpoolTestSupport
import XCTest

/// Stopping with an upload in flight, under a manual clock: `drain --max-time` and its grace, and
/// the first and second stop requests. Two items, one upload at a time: the second is due all along.
final class StopTimeTests: EngineTestCase {
    private func startTwo(maximumRunSeconds: Double? = nil) throws -> EmbeddedEngine {
        try drop("a.txt")
        try drop("b.txt")
        let embedded = try start(configuration(exitWhenIdle: maximumRunSeconds != nil, maximumRunSeconds: maximumRunSeconds))
        XCTAssertEqual(embedded.transport.inFlight, 1)
        return embedded
    }

    func testMaxTime_stopsTakingWorkAtTheDeadline_andLetsTheUploadFinishInTheGrace() throws {
        let embedded = try startTwo(maximumRunSeconds: 5)
        try embedded.advanceTime(to: 5)
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)

        let summary = try XCTUnwrap(embedded.summary, "finished once the upload in flight did")
        XCTAssertEqual(summary.stop, .timeLimit)
        XCTAssertEqual(summary.uploaded, 1)
        XCTAssertEqual(embedded.transport.started.count, 1, "the second item is not started after the deadline")
        XCTAssertEqual(attempts(in: .pending), [0])
        XCTAssertEqual(embedded.transport.cancelTimes, [])
    }

    func testMaxTime_cancelsAfterTheGrace_andHandsTheAttemptBack() throws {
        let embedded = try startTwo(maximumRunSeconds: 5)  // grace: min(10, 5) s
        try embedded.advanceTime(to: 9.999)
        XCTAssertEqual(embedded.transport.cancelTimes, [], "not cancelled within the grace")
        XCTAssertNil(embedded.summary)

        try embedded.advanceTime(to: 10)
        try assertCancelledAndHandedBack(embedded, at: 10, stop: .timeLimit)  // deadline + grace
    }

    func testFirstStop_letsTheUploadInFlightFinish_andStartsNoOther() throws {
        let embedded = try startTwo()
        embedded.engine.requestStop()
        try embedded.advanceTime(to: 120)
        XCTAssertNil(embedded.summary, "waits for the upload in flight, however long")
        XCTAssertEqual(embedded.transport.cancelTimes, [])

        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)
        let summary = try XCTUnwrap(embedded.summary)
        XCTAssertEqual(summary.stop, .requested)
        XCTAssertEqual(summary.uploaded, 1)
        XCTAssertEqual(embedded.transport.started.count, 1)
        XCTAssertEqual(attempts(in: .pending), [0])
    }

    func testSecondStop_cancelsTheUploadInFlight_andHandsTheAttemptBackUncounted() throws {
        let embedded = try startTwo()
        embedded.engine.requestStop()
        try embedded.advanceTime(to: 3)
        embedded.engine.requestStop()
        try embedded.advanceTime(by: 0)

        try assertCancelledAndHandedBack(embedded, at: 3, stop: .requested)  // at the second request
    }

    /// The upload in flight was cancelled `at` seconds after the start, the run ended, and both
    /// items are back in pending/ with no attempt counted.
    private func assertCancelledAndHandedBack(
        _ embedded: EmbeddedEngine, at seconds: Double, stop: RunSummary.Stop, line: UInt = #line
    ) throws {
        XCTAssertEqual(embedded.transport.cancelTimes, [embedded.startedAt.adding(seconds: seconds)], line: line)
        let summary = try XCTUnwrap(embedded.summary, "the run ended", line: line)
        XCTAssertEqual(summary.stop, stop, line: line)
        XCTAssertEqual(summary.uploaded + summary.retried + summary.failed, 0, line: line)
        XCTAssertEqual(attempts(in: .pending), [0, 0], "the cancelled attempt is handed back uncounted", line: line)
        XCTAssertEqual(temp.names(in: .inflight), [], line: line)
    }

    func testRecycle_afterItsRequests_takesNoNewWork_andCancelsAfterItsGrace() throws {
        try drop("a.txt")
        try drop("b.txt")
        var configuration = configuration(concurrency: 1)
        configuration.recycleAfterRequests = 1
        configuration.recycleGraceSeconds = 30
        let embedded = try start(configuration)
        XCTAssertEqual(embedded.transport.inFlight, 1)

        try embedded.advanceTime(to: 29.999)
        XCTAssertNil(embedded.summary, "the upload in flight gets the recycle's grace")
        XCTAssertEqual(embedded.transport.cancelTimes, [])
        try embedded.advanceTime(to: 30)
        try assertCancelledAndHandedBack(embedded, at: 30, stop: .recycle)
        XCTAssertEqual(embedded.transport.started.count, 1, "no new request once the recycle is due")
    }
}
