import Foundation
import SpoolCore
import SpoolEngine
import SpoolTestSupport
import XCTest

/// Stopping with an upload in flight, under a manual clock: `drain --max-time` and its grace, and
/// the first and second stop requests. Two items, one upload at a time: the second is due all along.
/// Queued items (no direct uploads): `DirectUploadTests` covers a direct upload stopped.
final class StopTimeTests: EngineTestCase {
    private func startTwo(maximumRunSeconds: Double? = nil) throws -> EmbeddedEngine {
        try drop("a.txt")
        try drop("b.txt")
        let embedded = try start(configuration(exitWhenIdle: maximumRunSeconds != nil, maximumRunSeconds: maximumRunSeconds, direct: false))
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

    /// A run that ends has made every transition it recorded: the index is cut back to its
    /// header, so the next start (a recycle's, too) reads no history and looks for no item it
    /// named. (A recycled image once spent 1.7 s looking for the 8,000 items uploaded before.)
    func testAStop_leavesTheIndexAtItsHeader() throws {
        let embedded = try startTwo()
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)
        let index = temp.spoolPath + "/index.wal"
        let header = 29  // `R 14 <crc32c> spoold-index 1` and its newline
        XCTAssertGreaterThan(try fileSize(index), header, "the run's records")
        embedded.engine.requestStop()
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(try XCTUnwrap(embedded.summary).uploaded, 2)
        XCTAssertEqual(try fileSize(index), header, "the header alone")
    }

    private func fileSize(_ path: String) throws -> Int {
        try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
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
        var configuration = configuration(concurrency: 1, direct: false)
        configuration.recycle = RecycleTrigger(maximumRequests: 1, growthLimitKiB: 0)
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

    func testRecycle_onMemoryGrowth_afterWarmUp_letsTheUploadInFlightFinish_andKeepsTheReference() throws {
        for n in 0..<6 { try drop("item-\(n).txt") }
        var configuration = configuration(concurrency: 1, direct: false)
        configuration.recycle = RecycleTrigger(
            maximumRequests: 0, growthLimitKiB: 1024, warmUpRequests: 2, checkEveryRequests: 1)
        var resident = 40_000
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration, clock: clock, residentKiB: { resident })

        XCTAssertEqual(embedded.transport.started.count, 1)
        XCTAssertNil(embedded.engine.recycleReferenceKiB, "warming up: memory is not read")
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0.1)
        XCTAssertEqual(embedded.engine.recycleReferenceKiB, 40_000, "noted once the warm-up's 2 requests started")

        resident = 41_024  // at the limit: goes on
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0.1)
        XCTAssertEqual(embedded.transport.started.count, 3)
        XCTAssertNil(embedded.engine.recycleReason)
        resident = 41_025  // past it: the check after the 4th request makes the recycle due
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0.1)
        XCTAssertEqual(embedded.engine.recycleReason, .memory(residentKiB: 41_025, referenceKiB: 40_000))
        XCTAssertNil(embedded.summary, "the upload in flight gets the recycle's grace")
        try embedded.advanceTime(by: 10)
        XCTAssertEqual(embedded.transport.started.count, 4, "no new request once the recycle is due")
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0.1)

        let summary = try XCTUnwrap(embedded.summary, "ended once the upload in flight did")
        XCTAssertEqual(summary.stop, .recycle)
        XCTAssertEqual(summary.uploaded, 4)
        XCTAssertEqual(attempts(in: .pending), [0, 0], "the rest waits for the next image")
        XCTAssertEqual(embedded.transport.cancelTimes, [])
    }
}
