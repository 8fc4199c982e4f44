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
}
