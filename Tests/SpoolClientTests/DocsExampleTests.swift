import Foundation
import SpoolClient
import XCTest

/// docs/library.md's example, as written there (its paths made parameters, its prints a returned text), so it keeps
/// compiling and doing what the page says.
final class DocsExampleTests: XCTestCase {
    func example(spoolPath: String, file: String) throws -> String {
        let spool = SpoolClient(spool: spoolPath)
        var said = ""
        do {
            let id = try spool.enqueue(
                file: file,
                options: EnqueueOptions(
                    headers: ["X-Instrument": "spectrometer-3"], fields: ["run": "42"],
                    contentType: "text/csv", move: true, maximumSpoolBytes: 2 << 30))
            said = "queued as \(id)"  // the item's id, also its uploads' Idempotency-Key
        } catch .spoolFull {
            said = "full"  // The queue holds 2 GiB already (exit code 75 for spoold enqueue): try again later.
        } catch {
            said = "not queued: \(error) (spoold enqueue would exit \(error.exitCode))"
        }
        let status = try spool.status()
        return said + "; \(status.pending.count) pending, \(status.failed.count) failed, daemon: \(status.daemonPID.map(String.init) ?? "not running")"
    }

    func testTheExample_queuesTheFile_andReadsTheStatus() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-docs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
        try Data("wavelength,counts\n".utf8).write(to: URL(fileURLWithPath: root + "/run-0042.csv"))

        let said = try example(spoolPath: root + "/spool", file: root + "/run-0042.csv")

        XCTAssertTrue(said.hasPrefix("queued as "), said)
        XCTAssertTrue(said.hasSuffix("-run-0042.csv; 1 pending, 0 failed, daemon: not running"), said)
        XCTAssertTrue(try example(spoolPath: root + "/spool", file: root + "/gone.csv").hasPrefix("not queued: skipped "))
    }
}
