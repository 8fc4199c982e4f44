import Foundation
import UploadReceiver
import XCTest

/// `spoold run`: event-driven pickup, one daemon per spool, clean stop on SIGTERM.
final class DaemonTests: XCTestCase {
    func testRun_picksUpFilesRenamedIn_thenStopsCleanlyOnSIGTERM() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/in/"])
        addTeardownBlock { daemon.signal(SIGKILL) }

        for i in 0..<5 { try spool.drop("live-\(i).txt", payload(100 + i, seed: UInt64(i))) }
        XCTAssertTrue(receiver.waitForRequests(count: 5, timeout: 30), "uploaded while running: \(daemon.readErr())")

        // A second daemon on the same spool refuses clearly.
        let second = try SpooldProcess.run(["run", "--spool", spool.path, "--url", receiver.baseURL + "/in/"], timeout: 30)
        XCTAssertEqual(second.exitCode, 4)
        XCTAssertTrue(second.stderr.contains("already working on"), second.stderr)

        let status = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((object["daemon"] as? [String: Any])?["running"] as? Bool, true)
        XCTAssertEqual((object["daemon"] as? [String: Any])?["pid"] as? Int, Int(daemon.process.processIdentifier))

        daemon.signal(SIGTERM)
        let result = try daemon.wait(timeout: 30)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(Set(receiver.requests.map(\.target)), Set((0..<5).map { "/in/live-\($0).txt" }))
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testRun_adoptsItemsAnOperatorMovesIntoPendingByHand() throws {
        let receiver = UploadReceiver(script: .always(500))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        try spool.drop("stuck.txt", [9, 9])
        let first = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", receiver.baseURL + "/", "--retry-base", "0", "--settle", "0"])
        XCTAssertEqual(first.exitCode, 1)
        let failed = spool.files(in: "failed")
        XCTAssertEqual(failed.count, 2)

        receiver.setScript(.always(201))
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/"])
        addTeardownBlock { daemon.signal(SIGKILL) }
        // The operator's `mv failed/* pending/` (json last, like spoold itself does).
        for name in failed.sorted(by: { $0.hasSuffix(".blob") && !$1.hasSuffix(".blob") }) {
            XCTAssertEqual(rename(spool.path + "/failed/" + name, spool.path + "/pending/" + name), 0)
        }
        XCTAssertTrue(receiver.waitForRequests(count: 4, timeout: 30), daemon.readErr())
        daemon.signal(SIGTERM)
        XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0)
        XCTAssertEqual(spool.itemFiles, [])
    }
}
