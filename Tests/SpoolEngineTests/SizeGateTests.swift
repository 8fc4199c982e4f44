import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// `--max-spool-size` in the engine: the spool is full while the queue is at the limit, and has
/// room again (said once, `SPOOL/size-limit` removed) once it is below 90 % of it, even when that
/// happens in the run's last step, which waits for nothing (a `drain` that ends there).
final class SizeGateTests: EngineTestCase {
    func testQueueThatEmptiesInTheLastStep_hasRoomAgain_andTheMarkerGoes() throws {
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let queue = QueueBytes(spool: try temp.open())
        let gate = SpoolSizeGate(limit: SpoolSizeLimit(bytes: 40), queue: queue, spool: try temp.open(), log: log)
        // Three files of 17 B, found by the start-up scan: 51 B queued, full (the gate's
        // admission is `Engine+Incoming`'s; here only its full/room bookkeeping is under test).
        for i in 0..<3 { try drop("f\(i).bin") }
        let embedded = try start(configuration(settle: 0, concurrency: 3, exitWhenIdle: true), observers: [queue, gate])
        embedded.engine.sizeGate = gate
        XCTAssertEqual(embedded.transport.inFlight, 3)
        let marker = temp.spoolPath + "/" + SpoolFullMarker.fileName
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker), "full at \(queue.total) B of 40")

        // All three answered at once: the step that records them finds the spool idle and ends the run.
        for _ in 0..<3 { try embedded.transport.answerNext(.status(201)) }
        try embedded.advanceTime(by: 0)

        XCTAssertNotNil(embedded.summary, "the drain ended")
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "room again once the queue emptied")
    }

    /// Files sent directly join the queue at once: they count once, not also as reserved, so the
    /// gate admits as it would for items (here the third file, the one item over).
    func testDirectUploads_countOnce_againstTheLimit() throws {
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        let queue = QueueBytes(spool: spool)
        let gate = SpoolSizeGate(limit: SpoolSizeLimit(items: 3), queue: queue, spool: spool, log: log)
        for i in 0..<3 { try drop("f\(i).bin") }  // 17 B each
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration(settle: 0, concurrency: 3), clock: clock, observers: [queue, gate],
            sizeGate: gate)
        XCTAssertEqual(embedded.transport.inFlight, 3, "0, 1 and 2 items queued are below 3: all three go")
        XCTAssertEqual(temp.names(in: .incoming), [])
        XCTAssertEqual(queue.total, 51)
    }

    /// A file that cannot be sent directly (a sidecar) was admitted once, when it was tried: it is
    /// taken in as an item without being counted a second time.
    func testFileTakenInInsteadOfSentDirectly_isAdmittedOnce() throws {
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        let queue = QueueBytes(spool: spool)
        let gate = SpoolSizeGate(limit: SpoolSizeLimit(items: 3), queue: queue, spool: spool, log: log)
        _ = try temp.write(Array(#"{"contentType": "text/plain"}"#.utf8), to: "f0.bin.meta.json", in: .incoming)
        for i in 0..<3 { try drop("f\(i).bin") }  // 17 B each
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration(settle: 0, concurrency: 3), clock: clock, observers: [queue, gate],
            sizeGate: gate)
        XCTAssertEqual(temp.names(in: .incoming), [], "f1 and f2 sent directly, f0 taken in: 0, 1 and 2 items were below 3")
        XCTAssertEqual(embedded.transport.inFlight, 3)
    }
}
