import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolTestSupport
import XCTest

/// Blocked is idle: the engine's next wake-up, while it can make no progress, is the next thing
/// that can change that (an event, a probe, a retry time), never "now". `EmbeddedEngine` throws
/// `BusyLoop` when steps at one instant do not settle. `BlockedIsIdleTests` measures the real
/// daemon's CPU time in the same states.
final class BlockedWakeTests: EngineTestCase {
    private static let refused = UploadOutcome.failed(.connectionRefused)

    /// `--max-items` reached during an outage, files waiting in incoming/: the engine sleeps
    /// until the next probe (it woke at once, every time, for as long as the spool stayed full).
    func testSpoolFullDuringAnOutage_sleepsUntilTheNextProbe() throws {
        let log = EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() })
        let spool = try temp.open(fs: fs)
        let queue = QueueBytes(spool: spool)
        let gate = SpoolSizeGate(limit: SpoolSizeLimit(items: 2), queue: queue, spool: spool, log: log)
        for i in 0..<3 { try drop("f\(i).bin") }  // 0 and 1 item queued are below 2, the third waits
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration(settle: 0, direct: false), clock: clock, observers: [queue, gate], sizeGate: gate)
        try embedded.transport.answerNext(Self.refused)
        try embedded.advanceTime(by: 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: temp.spoolPath + "/" + OutageMarker.fileName), "an outage")
        XCTAssertEqual(temp.names(in: .incoming), ["f2.bin"], "held by the size gate")

        let now = clock.now()
        let wake = try XCTUnwrap(embedded.nextWake)
        XCTAssertEqual(now.seconds(until: wake), 1, accuracy: 0.001, "the first probe, 1 s on")
        try embedded.advanceTime(by: 0.5)  // throws BusyLoop if the engine keeps waking at once
        XCTAssertEqual(embedded.transport.started.count, 1, "nothing sent before the probe")
    }

    /// An outage with no item due (the one that was is gone, the rest wait out their backoff):
    /// the probe waits for the first retry time instead of being tried, and not sent, at every turn.
    func testOutageWithNothingDue_sleepsUntilTheFirstRetryTime() throws {
        for i in 0..<2 { try drop("f\(i).bin") }
        let embedded = try start(configuration(settle: 0, concurrency: 2, policy: RetryPolicy(baseDelaySeconds: 30), direct: false))
        XCTAssertEqual(embedded.transport.inFlight, 2)
        try embedded.transport.answerNext(.status(503))  // f0: retried in ~30 s
        try embedded.transport.answerNext(Self.refused)  // f1: the outage begins, f1 handed back
        try embedded.advanceTime(by: 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: temp.spoolPath + "/" + OutageMarker.fileName), "an outage")
        // f1's blob is removed by hand: at the probe it is parked, and nothing else is due.
        let blob = try XCTUnwrap(temp.names(in: .pending).first { $0.contains("-f1.bin.") && $0.hasSuffix(".blob") })
        try FileManager.default.removeItem(atPath: temp.path(.pending, blob))
        try embedded.advanceTime(by: 1.5)
        XCTAssertEqual(attempts(in: .failed).count, 1, "f1 parked at the probe: its blob is missing")

        let now = clock.now()
        let wake = try XCTUnwrap(embedded.nextWake)
        XCTAssertGreaterThan(now.seconds(until: wake), 10, "asleep until f0's retry time, ~30 s after its attempt")
        try embedded.advanceTime(by: 5)
        XCTAssertEqual(embedded.transport.started.count, 2, "no probe without an item to send")
    }
}
