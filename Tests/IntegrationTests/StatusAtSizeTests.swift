import Foundation
import Glibc
import XCTest

/// `spoold status` at any size: while a daemon runs, the queue's figures are the daemon's own
/// (`SPOOL/counts`), with the disk the items take and the daemon's limits; without one, from the
/// folders.
final class StatusAtSizeTests: XCTestCase {
    private func statusJSON(_ spool: TestSpool) throws -> [String: Any] {
        let result = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// What the files of the items in pending/ and inflight/ take on disk, as stat says.
    private func diskOfQueue(_ spool: TestSpool) -> Int {
        var total = 0
        for folder in ["pending", "inflight"] {
            for name in spool.files(in: folder) where name.hasSuffix(".json") || name.hasSuffix(".blob") {
                var status = stat()
                XCTAssertEqual(stat("\(spool.path)/\(folder)/\(name)", &status), 0)
                total += Int(status.st_blocks) * 512
            }
        }
        return total
    }

    func testStatusWhileADaemonRuns_takesTheDaemonsCounts_withTheDiskAndTheLimits() throws {
        let spool = try TestSpool(self)
        var files: [String] = []
        for n in 0..<250 {
            let path = spool.root + "/f\(n).bin"
            try Data(repeating: UInt8(n), count: 10).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        XCTAssertEqual(try SpooldProcess.run(["enqueue", "--spool", spool.path] + files).exitCode, 0)
        let before = try statusJSON(spool)
        XCTAssertEqual((before["counts"] as? [String: Any])?["from"] as? String, "folders")
        XCTAssertEqual((before["queue"] as? [String: Any])?["items"] as? Int, 250)
        XCTAssertEqual((before["queue"] as? [String: Any])?["inodes"] as? Int, 500)
        XCTAssertEqual((before["queue"] as? [String: Any])?["diskBytes"] as? Int, diskOfQueue(spool), "both files' blocks")
        XCTAssertNil((before["queue"] as? [String: Any])?["maxItems"], "no daemon: its limits are unknown")

        // Nothing listens: an outage, the queue stays; memory holds 100 of the 250.
        let port = try RefusingPort(self).port
        let daemon = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--queue-memory", "100",
             "--max-items", "1000", "--max-spool-size", "1G"])
        addTeardownBlock { daemon.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 20) {
            guard let data = FileManager.default.contents(atPath: spool.path + "/counts"),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return false }
            return object["counting"] as? Bool == false
        }, daemon.readErr())
        let running = try statusJSON(spool)
        XCTAssertEqual((running["counts"] as? [String: Any])?["from"] as? String, "daemon")
        let queue = try XCTUnwrap(running["queue"] as? [String: Any])
        XCTAssertEqual(queue["items"] as? Int, 250)
        XCTAssertEqual(queue["maxItems"] as? Int, 1000)
        XCTAssertEqual(queue["maxSpoolSize"] as? Int, 1 << 30)
        XCTAssertEqual(queue["diskBytes"] as? Int, diskOfQueue(spool), "the daemon's sums, memory and beyond")
        XCTAssertEqual(queue["bytes"] as? Int, 2500)
        let buckets = try XCTUnwrap(running["pendingByAge"] as? [[String: Any]])
        XCTAssertEqual(buckets.compactMap { $0["count"] as? Int }.reduce(0, +), (running["pending"] as? [String: Any])?["count"] as? Int)
        let text = try SpooldProcess.run(["status", "--spool", spool.path])
        XCTAssertTrue(text.stdout.contains("queue    250 item(s) (500 inodes), "), text.stdout)
        XCTAssertTrue(text.stdout.contains("the daemon's --max-spool-size 1.0 GiB ("), text.stdout)
        XCTAssertTrue(text.stdout.contains("--max-items 1000 (25%)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("counts   the daemon's, "), text.stdout)

        daemon.signal(SIGTERM)
        XCTAssertEqual(try daemon.wait(timeout: 20).exitCode, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: spool.path + "/counts"), "removed at the stop")
    }

    /// `--max-items`: files wait in incoming/ once the queue holds that many; status says which
    /// limit is reached.
    func testMaxItems_holdsFilesBack_andStatusSaysSo() throws {
        let spool = try TestSpool(self)
        for n in 0..<4 { try spool.drop("f\(n).bin", [UInt8(n)]) }
        let port = try RefusingPort(self).port
        let daemon = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0", "--max-items", "2"])
        addTeardownBlock { daemon.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: spool.path + "/size-limit") }, daemon.readErr())
        XCTAssertTrue(waitUntil(timeout: 20) { spool.files(in: "incoming").count == 2 }, daemon.readErr())
        let text = try SpooldProcess.run(["status", "--spool", spool.path])
        XCTAssertTrue(text.stdout.contains("--max-items 2 reached; new files wait in incoming/"), text.stdout)
        let object = try statusJSON(spool)
        XCTAssertEqual((object["full"] as? [String: Any])?["limitItems"] as? Int, 2)
        XCTAssertNil((object["full"] as? [String: Any])?["limitBytes"])
        daemon.signal(SIGTERM)
        _ = try daemon.wait(timeout: 20)
    }
}
