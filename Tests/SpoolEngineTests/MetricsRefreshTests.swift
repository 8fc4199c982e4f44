import Foundation
import SpoolCore
import SpoolEngine
import SpoolTestSupport
import XCTest

/// `--metrics-file` is rewritten every `SpoolMetrics.refreshSeconds` even while nothing happens
/// but probes of an unreachable endpoint (under the manual clock: `MetricsTests` runs the
/// daemon and checks the file at start and at exit).
final class MetricsRefreshTests: EngineTestCase {
    private var path: String { temp.spoolPath + "/spoold.prom" }
    private var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    func testMetricsFile_isRewrittenEveryRefreshDuringAnOutage() throws {
        try drop("a.bin")
        let spool = try temp.open(fs: fs)
        let queue = QueueBytes(spool: spool)
        let metrics = SpoolMetrics(
            spool: spool, queue: queue, path: path, log: EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() }))
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration(settle: 0, direct: false), clock: clock, observers: [queue, metrics])
        XCTAssertTrue(text.contains("spoold_endpoint_up 1"), "written at start: \(text)")
        try embedded.advanceTime(by: 0)
        try embedded.transport.answerNext(.failed(.connectionRefused))
        try embedded.advanceTime(by: 0)
        try FileManager.default.removeItem(atPath: path)

        try embedded.advanceTime(by: SpoolMetrics.refreshSeconds - 0.5)
        XCTAssertEqual(text, "", "not before its time")
        try embedded.advanceTime(by: 0.5)

        XCTAssertTrue(text.contains("spoold_endpoint_up 0"), text)
        XCTAssertTrue(text.contains("spoold_uploads_total{outcome=\"outage\"} 1"), text)
    }
}
