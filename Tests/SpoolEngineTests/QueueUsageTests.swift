import Foundation
import Glibc
import SpoolCore
@testable import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import Synchronization
import XCTest

/// The disk the queue takes (`QueueBytes`) and the counts a daemon keeps for `spoold status`
/// (`SPOOL/counts`): both files' blocks of every queued item, counted at a memory that does not
/// grow with the queue; what lies beyond memory counted once at start, off the engine's thread,
/// the size limits holding files back until it is.
final class QueueUsageTests: EngineTestCase {
    /// Writes items straight into pending/ (a test's spool: no sync), `size` payload bytes each.
    /// `dueIn`: tried once and due again that many seconds from now (its json's mtime).
    private func writeItems(_ count: Int, size: Int = 1, dueIn: Double? = nil) throws -> [ItemID] {
        var maker = TestItems(startingAt: clock.now().millisecondsSinceEpoch - Int64(count) - 600_000)
        var ids: [ItemID] = []
        let attempt = dueIn == nil ? 0 : 1
        for n in 0..<count {
            var metadata = maker.metadata("f\(n).dat")
            metadata.size = Int64(size)
            let id = try XCTUnwrap(ItemID(metadata.id))
            try temp.writeItem(
                metadata, payload: [UInt8](repeating: 7, count: size), attempt: attempt, mtime: dueIn.map { clock.now().adding(seconds: $0) })
            ids.append(id)
        }
        return ids
    }

    /// What both files of every item in pending/ take on disk, as `stat` says.
    private func allocatedInPending() throws -> Int64 {
        var total: Int64 = 0
        for name in temp.names(in: .pending) {
            var status = stat()
            XCTAssertEqual(stat(temp.path(.pending, name), &status), 0)
            total += Int64(status.st_blocks) * 512
        }
        return total
    }

    /// `--max-spool-size` counts blocks: three files of 17 B are 51 B of payload, under a limit of
    /// 1,000 B, but each item's two files take a block or more each, so one item fills it.
    func testSizeLimit_countsTheBlocksBothFilesTake_notThePayload() throws {
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        let queue = QueueBytes(spool: spool)
        let gate = SpoolSizeGate(limit: SpoolSizeLimit(bytes: 1000), queue: queue, spool: spool, log: log)
        for i in 0..<3 { try drop("f\(i).bin") }  // 17 B each
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration(settle: 0, direct: false), clock: clock, observers: [queue, gate], sizeGate: gate)
        XCTAssertEqual(temp.names(in: .incoming), ["f1.bin", "f2.bin"], "the first item's blocks fill 1,000 B")
        let usage = try XCTUnwrap(queue.usage)
        XCTAssertEqual(usage.items, 1)
        XCTAssertEqual(usage.payloadBytes, 17)
        XCTAssertEqual(usage.diskBytes, try allocatedInPending() + allocatedInFlight(), "blob and json, as stat says")
        XCTAssertGreaterThan(usage.diskBytes, 1000)
        let marker = try XCTUnwrap(SpoolFullMarker.read(in: spool))
        XCTAssertEqual(marker.limitBytes, 1000)
        XCTAssertEqual(marker.queuedBytes, usage.diskBytes)
        XCTAssertNil(marker.limitItems)
        withExtendedLifetime(embedded) {}
    }

    private func allocatedInFlight() throws -> Int64 {
        var total: Int64 = 0
        for name in temp.names(in: .inflight) {
            var status = stat()
            XCTAssertEqual(stat(temp.path(.inflight, name), &status), 0)
            total += Int64(status.st_blocks) * 512
        }
        return total
    }

    /// A queue of 1,000 with memory for 10 (tried once, due in an hour: nothing moves meanwhile):
    /// the queue beyond memory is counted once at start (on the pass's thread: here run when the
    /// test says), every file's blocks; until then `usage` is nil and `--max-items` holds new
    /// files back without saying the spool is full. The table of sizes by item never holds more
    /// than memory does.
    func testQueueBeyondMemory_isCountedOnceOffTheEngineThread_andLimitsWaitForIt() throws {
        _ = try writeItems(1_000, dueIn: 3600)
        let expectedDisk = try allocatedInPending()
        try drop("new.bin")
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        fs.skipsSyncs = true  // the count is the subject, not durability
        let queue = QueueBytes(spool: spool)
        let gate = SpoolSizeGate(limit: SpoolSizeLimit(items: 1_000_000), queue: queue, spool: spool, log: log)
        let counts = QueueCountsPublisher(spool: spool, queue: queue, limit: gate.limit, log: log)
        var configuration = configuration(settle: 0, concurrency: 2, direct: false)
        configuration.queueMemory = 10
        let deferred = Mutex<[@Sendable () -> Void]>([])
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration, clock: clock, observers: [queue, gate, counts], sizeGate: gate,
            runPass: { work in deferred.withLock { $0.append(work) } })
        XCTAssertNil(queue.usage, "still counting")
        XCTAssertEqual(temp.names(in: .incoming), ["new.bin"], "held until the queue is counted")
        XCTAssertNil(SpoolFullMarker.read(in: spool), "counting is not full")
        let during = try XCTUnwrap(QueueCountsFile.read(in: spool))
        XCTAssertTrue(during.counting)
        XCTAssertNil(during.pending.diskBytes)
        XCTAssertEqual(during.pending.count + during.inflight.count, 1_000, "counts from the first pass, bytes to come")

        // The count (and any pass) runs; its end wakes the engine, which takes the file in.
        for work in deferred.withLock({ list in defer { list.removeAll() }; return list }) { work() }
        try embedded.advanceTime(by: 0)
        let usage = try XCTUnwrap(queue.usage)
        XCTAssertEqual(temp.names(in: .incoming), [], "taken in once counted")
        XCTAssertEqual(usage.items, 1_001)
        XCTAssertEqual(usage.payloadBytes, 1_000 + Int64("content of new.bin".utf8.count))
        XCTAssertEqual(usage.diskBytes, try allocatedInPending() + allocatedInFlight(), "every file's blocks, in memory or beyond")
        XCTAssertGreaterThan(usage.diskBytes, expectedDisk)
        XCTAssertLessThanOrEqual(queue.itemsMeasured, 10 + 2, "sizes by item only for memory (and a round's arrivals)")

        try embedded.advanceTime(by: 1)
        let after = try XCTUnwrap(QueueCountsFile.read(in: spool))
        XCTAssertFalse(after.counting)
        XCTAssertEqual(after.pending.count + after.inflight.count, 1_001)
        XCTAssertEqual((after.pending.diskBytes ?? 0) + (after.inflight.diskBytes ?? 0), usage.diskBytes)
        XCTAssertEqual(after.pendingByAge.total, after.pending.count, "every pending item by age")
        XCTAssertEqual(after.limit?.items, 1_000_000)
    }

    /// A daemon started on 1,000 queued items (tried once, due in an hour) with memory for 10,
    /// its pass worker's work held until the test runs it (`PassWork.runAll`).
    private func startBeyondMemory() throws -> (EmbeddedEngine, QueueBytes, PassWork) {
        let spool = try temp.open(fs: fs)
        fs.skipsSyncs = true
        let queue = QueueBytes(spool: spool)
        var configuration = configuration(settle: 0, concurrency: 2, direct: false)
        configuration.queueMemory = 10
        let work = PassWork()
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration, clock: clock, observers: [queue], runPass: { piece in work.held.withLock { $0.append(piece) } })
        return (embedded, queue, work)
    }

    /// The start's pass over a queue beyond memory counts what it takes in its own listing: a
    /// start lists pending/ twice (the first items in line, then the pass), not a third time for
    /// the count, and hands the pass worker one piece of work.
    func testTheStartsPass_countsTheQueueBeyondMemory_withoutListingPendingAgain() throws {
        _ = try writeItems(1_000, dueIn: 3600)
        let expectedDisk = try allocatedInPending()
        let (embedded, queue, work) = try startBeyondMemory()
        XCTAssertNil(queue.usage, "counted by the pass, not yet run")
        XCTAssertEqual(work.runAll(), 1, "the pass alone: no count of its own")
        try embedded.advanceTime(by: 0)
        let usage = try XCTUnwrap(queue.usage)
        XCTAssertEqual(usage.items, 1_000)
        XCTAssertEqual(usage.payloadBytes, 1_000)
        XCTAssertEqual(usage.diskBytes, expectedDisk)
        XCTAssertEqual(fs.calls(.list).filter { $0.name == "pending" }.count, 2, "the head's listing and the pass's")
    }

    /// A start's pass that cannot write its runs (a full disk) has counted nothing: the queue is
    /// then counted in a listing of its own, with the same items left out, so the size limits
    /// still learn what it takes.
    func testAStartsPassThatFails_leavesTheCountToAListingOfItsOwn() throws {
        _ = try writeItems(1_000, dueIn: 3600)
        let expectedDisk = try allocatedInPending()
        fs.failCall(.open, errno: ENOSPC) { $0.directory == "tmp" && $0.name.hasPrefix("backlog.") }
        let (embedded, queue, work) = try startBeyondMemory()
        XCTAssertEqual(work.runAll(), 1)
        try embedded.advanceTime(by: 0)
        XCTAssertNil(queue.usage, "the pass failed: counting again")
        XCTAssertEqual(work.runAll(), 1, "a count of its own")
        try embedded.advanceTime(by: 0)
        let usage = try XCTUnwrap(queue.usage)
        XCTAssertEqual(usage.payloadBytes, 1_000, "every item's bytes, though the engine's pass must run again for its items")
        XCTAssertEqual(usage.diskBytes, expectedDisk)
    }

    /// A recycle hands the queue's figures on (`QueueBytes.figuresForNextImage`): the new image
    /// takes them instead of counting pending/ again, so its limits do not hold files back
    /// meanwhile, and what joins after adds to them.
    func testARecycledImage_takesTheFiguresItWasHanded_insteadOfCountingTheQueueAgain() throws {
        _ = try writeItems(1_000, dueIn: 3600)
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        fs.skipsSyncs = true  // the count is the subject, not durability
        var configuration = configuration(settle: 0, concurrency: 2, direct: false)
        configuration.queueMemory = 10
        let first = QueueBytes(spool: try temp.open(fs: fs))
        let image = try EmbeddedEngine(spool: try temp.open(fs: fs), configuration: configuration, clock: clock, observers: [first])
        let counted = try XCTUnwrap(first.usage)
        image.engine.requestStop()
        try image.advanceTime(by: 1)
        XCTAssertNotNil(image.summary)
        let figures = try XCTUnwrap(first.figuresForNextImage)
        XCTAssertEqual(figures.usage.diskBytes, counted.diskBytes)
        XCTAssertEqual(figures.usage.items, 1_000)
        XCTAssertEqual(figures.ages.total, 1_000)

        try drop("new.bin")
        let spool = try temp.open(fs: fs)
        let queue = QueueBytes(spool: spool)
        queue.resume(from: figures)
        let gate = SpoolSizeGate(limit: SpoolSizeLimit(items: 1_000_000), queue: queue, spool: spool, log: log)
        let counts = QueueCountsPublisher(spool: spool, queue: queue, limit: gate.limit, log: log)
        let deferred = Mutex<[@Sendable () -> Void]>([])
        let next = try EmbeddedEngine(
            spool: spool, configuration: configuration, clock: clock, observers: [queue, gate, counts], sizeGate: gate,
            runPass: { work in deferred.withLock { $0.append(work) } },
            line: RecycleLine(queued: 1_000, entries: [], figures: figures))
        let usage = try XCTUnwrap(queue.usage, "not counting: the figures handed on stand in")
        XCTAssertEqual(temp.names(in: .incoming), [], "taken in at once")
        XCTAssertEqual(usage.diskBytes, try allocatedInPending() + allocatedInFlight(), "the handed figures, and the new file's blocks")
        let file = try XCTUnwrap(QueueCountsFile.read(in: spool))
        XCTAssertFalse(file.counting)
        XCTAssertEqual(file.pendingByAge.total, file.pending.count, "every pending item by age, the new one too")
        for work in deferred.withLock({ list in defer { list.removeAll() }; return list }) { work() }
        try next.advanceTime(by: 1)
        XCTAssertEqual(queue.usage?.items, 1_001)
        XCTAssertEqual(queue.usage?.diskBytes, try allocatedInPending() + allocatedInFlight())
    }

    /// Beyond its sample budget, the start-up count stats the files of a share of the items and
    /// scales their sums up: the figures say they are estimated (here exact all the same: every
    /// item takes the same), and `status` shows them as such.
    func testAQueueBeyondMemoryLargerThanTheSampleBudget_isCountedFromASample_andSaidToBeEstimated() throws {
        _ = try writeItems(1_000, dueIn: 3600)
        let expectedDisk = try allocatedInPending()
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        fs.skipsSyncs = true
        let queue = QueueBytes(spool: spool, startSampleBudget: 100)
        let counts = QueueCountsPublisher(spool: spool, queue: queue, limit: nil, log: log)
        var configuration = configuration(settle: 0, concurrency: 2, direct: false)
        configuration.queueMemory = 10
        let embedded = try EmbeddedEngine(spool: spool, configuration: configuration, clock: clock, observers: [queue, counts])
        try embedded.advanceTime(by: 1)
        XCTAssertTrue(queue.isEstimated, "1,000 beyond memory, a budget of 100: a sample")
        let usage = try XCTUnwrap(queue.usage)
        XCTAssertEqual(usage.items, 1_000)
        XCTAssertEqual(usage.payloadBytes, 1_000, "scaled up from the sample")
        XCTAssertEqual(usage.diskBytes, expectedDisk)
        let written = try XCTUnwrap(QueueCountsFile.read(in: spool))
        XCTAssertTrue(written.pending.estimated)
        let summary = try SpoolSummary.load(spool, now: clock.now(), daemonPID: getpid())
        XCTAssertEqual(summary.states[.pending]?.estimated, true, "status shows it as estimated")
        withExtendedLifetime(embedded) {}
    }

    /// The counts follow the queue as it drains (uploads leave it), and go when the run ends.
    func testCountsFile_followsTheQueue_andGoesAtTheEnd() throws {
        _ = try writeItems(200, size: 3)
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        fs.skipsSyncs = true
        let queue = QueueBytes(spool: spool)
        let counts = QueueCountsPublisher(spool: spool, queue: queue, limit: nil, log: log)
        var configuration = configuration(settle: 0, concurrency: 4, exitWhenIdle: true, direct: false)
        configuration.queueMemory = 50
        let embedded = try EmbeddedEngine(spool: spool, configuration: configuration, clock: clock, observers: [queue, counts])
        try embedded.advanceTime(by: 1)
        let first = try XCTUnwrap(QueueCountsFile.read(in: spool))
        XCTAssertEqual(first.pending.count + first.inflight.count, 200)
        XCTAssertEqual(first.inflight.count, 4)
        XCTAssertEqual((first.pending.payloadBytes ?? 0) + (first.inflight.payloadBytes ?? 0), 600)
        XCTAssertEqual(first.pid, getpid())
        for _ in 0..<25 {
            while embedded.transport.inFlight > 0 { try embedded.transport.answerNext(.status(201)) }
            try embedded.advanceTime(by: 0)
        }
        try embedded.advanceTime(by: 1.5)
        let later = try XCTUnwrap(QueueCountsFile.read(in: spool))
        XCTAssertEqual(later.pending.count + later.inflight.count, 100)
        XCTAssertEqual(later.inflight.count, 4)
        XCTAssertEqual((later.pending.payloadBytes ?? 0) + (later.inflight.payloadBytes ?? 0), 300)
        try spool.drainRemovals()  // uploaded items' files are unlinked in the background
        XCTAssertEqual((later.pending.diskBytes ?? 0) + (later.inflight.diskBytes ?? 0), try allocatedInPending() + allocatedInFlight())
        embedded.transport.autoAnswer = .status(201)
        while embedded.transport.inFlight > 0 { try embedded.transport.answerNext(.status(201)) }
        try embedded.advanceTime(by: 5)
        XCTAssertNotNil(embedded.summary, "drained")
        XCTAssertNil(QueueCountsFile.read(in: spool), "removed at the end")
    }

    /// A daemon that waits with a queue it cannot send (every item due in an hour) is not woken
    /// every second to rewrite its counts: only when their shape by age moves to another bucket.
    func testCountsFile_doesNotWakeAWaitingDaemonEverySecond() throws {
        _ = try writeItems(20, dueIn: 3600)
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        let queue = QueueBytes(spool: spool)
        let counts = QueueCountsPublisher(spool: spool, queue: queue, limit: nil, log: log)
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration(settle: 0, direct: false), clock: clock, observers: [queue, counts])
        try embedded.advanceTime(by: 2)
        let wake = try XCTUnwrap(embedded.nextWake)
        XCTAssertGreaterThan(clock.now().seconds(until: wake), 30, "asleep until the rescan, a retry or the next bucket")
        XCTAssertEqual(QueueCountsFile.read(in: spool)?.pending.count, 20)
    }
}

/// The pass worker's work, held until a test runs it.
final class PassWork: Sendable {
    let held = Mutex<[@Sendable () -> Void]>([])

    /// Runs what is held; returns how many pieces there were.
    @discardableResult
    func runAll() -> Int {
        let work = held.withLock { list in defer { list.removeAll() }; return list }
        for piece in work { piece() }
        return work.count
    }
}
