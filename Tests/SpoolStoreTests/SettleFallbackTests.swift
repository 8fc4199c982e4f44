import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// The engine's rule for files found by a scan when the kernel will not answer the lease
/// question (another user's file without CAP_LEASE): size and mtime unchanged across two looks
/// `--settle` apart. The refusal is injected, as the test runs as the files' owner.
final class SettleFallbackTests: StoreTestCase {
    private func drain(settle: Double, refuseLeases: Bool) throws -> (summary: RunSummary, checks: Int, seconds: Double) {
        let path = try temp.write(Array("an old, complete file".utf8), to: "old.txt", in: .incoming)
        var times = [timespec(tv_sec: time(nil) - 60, tv_nsec: 0), timespec(tv_sec: time(nil) - 60, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        let fs = RecordingFileSystem()
        if refuseLeases { for n in 1...10 { fs.failCall(.writerCheck, nth: n, errno: EACCES) } }
        let configuration = EngineConfiguration(
            url: URLTemplate("http://127.0.0.1:9/"), settleSeconds: settle, exitWhenIdle: true)
        let engine = try Engine(
            spool: try temp.open(fs: fs), transport: RecordedDrain.AnsweringTransport(.status(201)), clock: SystemClock(),
            configuration: configuration, log: EventLog(minimumLevel: .error, clock: { SystemClock().now() }), processTag: 7)
        let started = Date()
        let summary = try engine.run()
        return (summary, fs.calls(.writerCheck).count, Date().timeIntervalSince(started))
    }

    func testScan_leaseRefused_takesAnOldFileAfterTwoUnchangedLooksSettleApart() throws {
        let run = try drain(settle: 0.3, refuseLeases: true)
        XCTAssertEqual(run.summary.ingested, 1)
        XCTAssertEqual(run.checks, 2, "looked at twice")
        XCTAssertGreaterThanOrEqual(run.seconds, 0.3, "the second look is --settle after the first")
    }

    func testScan_leaseGranted_takesAnOldFileAtTheFirstLook() throws {
        let run = try drain(settle: 5, refuseLeases: false)
        XCTAssertEqual(run.summary.ingested, 1)
        XCTAssertEqual(run.checks, 1)
        XCTAssertLessThan(run.seconds, 5, "no second look")
    }
}
