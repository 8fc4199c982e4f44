import Dispatch
import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// The loop never waits on the disk (`Engine+Durability`): while a sync is slow (another
/// program's writes keep the disk busy for a minute), the engine goes on collecting answers,
/// starting uploads and keeping its deadlines; what finished is recorded, and told, once the
/// sync is made; a sync that fails stops it with nothing more acknowledged.
final class SlowSyncTests: EngineTestCase {
    private final class Told: EngineObserver, @unchecked Sendable {
        var finished: [ItemOutcomeEvent] = []
        func itemFinished(_ event: ItemOutcomeEvent) { finished.append(event) }
    }

    /// `count` items queued before the engine starts, due a few milliseconds after it.
    @discardableResult
    private func enqueue(_ count: Int) throws -> [ItemID] {
        var items = TestItems()
        var batch: [NewItem] = []
        for i in 0..<count {
            try temp.write(Array("item \(i)".utf8), to: "q\(i)", in: .incoming)
            batch.append(items.incoming("q\(i)"))
        }
        _ = try temp.open().add(batch)
        return batch.map(\.id)
    }

    /// Steps the engine (its syncs on a thread of their own) until no commit is in flight: at
    /// once when the worker wakes it, else at its next look (every upload slot busy).
    private func waitForCommits(_ embedded: EmbeddedEngine) throws {
        let deadline = Date().addingTimeInterval(20)
        while embedded.engine.commitsInFlight > 0 {
            guard Date() < deadline else { return XCTFail("the commits in flight were never done") }
            try embedded.advanceTime(by: 0.1)
            usleep(1000)
        }
    }

    func testIndexSyncHeld_theLoopCollectsAnswersAndStartsUploads_andRecordsThemOnceItIsMade() throws {
        let ids = try enqueue(4)
        let told = Told()
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration(concurrency: 2, direct: false), clock: clock, observers: [told],
            syncs: .own)
        let gate = DispatchSemaphore(value: 0), entered = DispatchSemaphore(value: 0)
        addTeardownBlock { gate.signal() }
        fs.hold(.sync, until: gate, entered: entered) { $0.name == SpoolFolder.indexFileName }

        try embedded.advanceTime(by: 1)
        XCTAssertEqual(embedded.transport.started.map(\.request.id), Array(ids[0..<2]), "the claims' uploads start at once")
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success, "the claims' index fsync is under way, and held")

        // The disk is stuck in that fsync; the loop is not.
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.started.count, 3, "the freed slot took the next item while the fsync is held")
        try embedded.transport.answerNext(.status(503))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.started.map(\.request.id), ids, "every item started while the fsync is held")
        XCTAssertEqual(fs.heldCallsTimedOut, 0, "the loop never waited for the held fsync")
        XCTAssertEqual(told.finished.map(\.id), [], "nothing is told before it is durable")
        XCTAssertEqual(temp.names(in: .inflight).filter { $0.hasSuffix(".json") }.count, 4, "the answered items' files wait for their records")

        gate.signal()
        try waitForCommits(embedded)
        XCTAssertEqual(told.finished.map(\.id), [ids[0]], "the success, told once durable")
        XCTAssertEqual(temp.names(in: .pending), ["\(ids[1]).a1.blob", "\(ids[1]).a1.json"], "the 503, back in pending/ with its attempt counted")
        XCTAssertEqual(Set(temp.names(in: .inflight)), Set(ids[2...].flatMap { ["\($0).a1.blob", "\($0).a1.json"] }))
    }

    /// A sync the worker could not make stops the engine at its next step, as a failed fsync on
    /// the loop did: nothing of the round it covered is acknowledged, nothing more starts.
    func testFailedSync_onTheWorker_stopsTheEngine_withNothingAcknowledged() throws {
        let ids = try enqueue(1)
        let told = Told()
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration(concurrency: 1, direct: false), clock: clock, observers: [told],
            syncs: .own)
        try embedded.advanceTime(by: 1)
        try waitForCommits(embedded)
        fs.failCall(.sync, errno: EIO) { $0.name == SpoolFolder.indexFileName }
        try embedded.transport.answerNext(.status(201))

        let deadline = Date().addingTimeInterval(20)
        var stopped: (any Error)?
        while stopped == nil && Date() < deadline {
            do { try embedded.advanceTime(by: 0) } catch { stopped = error }
            usleep(1000)
        }
        XCTAssertEqual((stopped as? SystemError)?.errno, .ioError, "\(String(describing: stopped))")
        XCTAssertEqual(told.finished.map(\.id), [], "the success whose record could not be made durable is not told")
        XCTAssertEqual(temp.names(in: .inflight), ["\(ids[0]).a1.blob", "\(ids[0]).a1.json"], "left for start-up recovery")
        XCTAssertEqual(embedded.transport.started.count, 1, "nothing more started")
    }

    /// A finished item whose commit is in flight is being recorded: a requeued one is claimed
    /// again only once its files are back in pending/ for good, however long that takes.
    func testRequeuedItem_isNotClaimedAgain_untilItsCommitIsDone() throws {
        let ids = try enqueue(1)
        let syncs = HeldSyncs()
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration(concurrency: 2, direct: false), clock: clock, syncs: syncs.thread)
        try embedded.advanceTime(by: 1)
        syncs.release()
        try embedded.transport.answerNext(.status(503))
        try embedded.advanceTime(by: 0)
        XCTAssertGreaterThan(syncs.waiting, 0)
        XCTAssertEqual(embedded.engine.commitsInFlight, 1)

        try embedded.advanceTime(by: 3600)  // long past its next-attempt time
        XCTAssertEqual(embedded.transport.started.count, 1, "claimed again before its requeue was durable")
        XCTAssertEqual(embedded.engine.pendingCount, 1, "counted once")
        // Its json, its record, then the folders it moved in: one sync after another.
        for _ in 0..<3 where embedded.transport.started.count == 1 {
            syncs.release()
            try embedded.advanceTime(by: 0)
        }
        XCTAssertEqual(embedded.transport.started.map(\.request.id), [ids[0], ids[0]])
        XCTAssertEqual(embedded.transport.started.last?.request.attempt, 2)
    }

    /// Rounds whose syncs wait together (the disk was busy with the first) are made as one: one
    /// index fsync for all of them, not one each, so a slow disk does not leave the worker
    /// further behind with every round (group commit on its thread).
    func testSyncsWaitingTogether_areMadeAsOne() throws {
        let ids = try enqueue(4)
        let told = Told()
        let syncs = HeldSyncs()
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration(concurrency: 4, direct: false), clock: clock, observers: [told],
            syncs: syncs.thread)
        try embedded.advanceTime(by: 1)
        for _ in 0..<3 {
            try embedded.transport.answerNext(.status(201))
            try embedded.advanceTime(by: 0)
        }
        // Four rounds of a claim each (the items are due a millisecond apart), three of a success each.
        XCTAssertEqual(embedded.engine.commitsInFlight, 7)
        fs.resetLog()
        syncs.release(1)
        XCTAssertEqual(fs.calls(.sync).filter { $0.name == SpoolFolder.indexFileName }.count, 1, "one index fsync for seven rounds")
        syncs.release()
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.engine.commitsInFlight, 0)
        XCTAssertEqual(Set(told.finished.map(\.id)), Set(ids[0..<3]))
    }

    /// `--exit-when-idle` (and a stop) waits for the commits in flight: a run does not end with
    /// its last success not yet durable.
    func testExitWhenIdle_waitsForTheCommitsInFlight() throws {
        try enqueue(1)
        let syncs = HeldSyncs()
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration(exitWhenIdle: true, direct: false), clock: clock,
            syncs: syncs.thread)
        try embedded.advanceTime(by: 1)
        syncs.release()
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 60)
        XCTAssertNil(embedded.summary, "the run ended with its last success not durable")
        XCTAssertNotNil(embedded.nextWake)
        syncs.release()
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.summary?.uploaded, 1)
        XCTAssertEqual(temp.names(in: .inflight), [])
    }
}
