import Foundation
import Glibc
import UploadReceiver
import XCTest

/// `--max-spool-size` (the disk the queue's files take) with the endpoint down, then back.
final class SizeLimitTests: XCTestCase {
    private func jsons(_ spool: TestSpool, _ folder: String) -> [String] { spool.files(in: folder).filter { $0.hasSuffix(".json") } }
    /// The items queued (pending or in flight), by id: one claimed or requeued between the two
    /// listings is in both (its name's attempt count aside), and counts once.
    private func queuedIDs(_ spool: TestSpool) -> Set<String> {
        Set((jsons(spool, "pending") + jsons(spool, "inflight")).map {
            $0.replacingOccurrences(of: #"\.a[0-9]+\.json$"#, with: "", options: .regularExpression)
        })
    }

    /// What a file of `size` bytes takes on the spool's file system (a block, 4 KiB on ext4).
    private func block(_ spool: TestSpool, size: Int = 100) throws -> Int {
        let probe = spool.root + "/block-probe"
        try Data(repeating: 1, count: size).write(to: URL(fileURLWithPath: probe))
        defer { try? FileManager.default.removeItem(atPath: probe) }
        var status = stat()
        XCTAssertEqual(stat(probe, &status), 0)
        return Int(status.st_blocks) * 512
    }

    func testBlock_filesWaitInIncomingUntouched_statusSaysFull_thenAllArriveWhenTheEndpointIsBack() throws {
        let refusing = try RefusingPort(self)
        let port = refusing.port
        let spool = try TestSpool(self)
        let bodies = (0..<5).map { payload(100, seed: UInt64(20 + $0)) }
        for (i, body) in bodies.enumerated() { try spool.drop("f\(i).bin", body) }
        // Three blocks: files sent directly take one each (no json yet), so 0, 1 and 2 blocks
        // queued are below it and three files join (one item over); two wait.
        let limit = "\(3 * (try block(spool)))"
        let drain = try SpooldProcess(
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0",
             "--max-spool-size", limit])
        addTeardownBlock { drain.signal(SIGKILL) }

        XCTAssertTrue(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: spool.path + "/size-limit") }, drain.readErr())
        XCTAssertTrue(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: spool.path + "/outage") }, drain.readErr())
        // The first files were sent directly and are made items in the round that saw the
        // outage, just after its marker: wait for that round.
        XCTAssertTrue(waitUntil(timeout: 20) { jsons(spool, "pending").count + jsons(spool, "inflight").count == 3 }, drain.readErr())
        XCTAssertEqual(spool.files(in: "incoming"), ["f3.bin", "f4.bin"])
        for i in 3...4 {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: spool.incoming + "/f\(i).bin")), Data(bodies[i]), "left untouched")
        }
        let status = try SpooldProcess.run(["status", "--spool", spool.path])
        XCTAssertTrue(status.stdout.contains("full     since"), status.stdout)
        XCTAssertTrue(status.stdout.contains("new files wait in incoming/"), status.stdout)
        let statusJSON = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(statusJSON.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((object["full"] as? [String: Any])?["limitBytes"] as? Int, Int(limit))
        XCTAssertEqual((object["queue"] as? [String: Any])?["maxSpoolSize"] as? Int, Int(limit), "the daemon's limit, from SPOOL/counts")

        // enqueue, given the same limit, refuses with 75 while the spool is full.
        let extra = spool.root + "/extra.bin"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: extra))
        let refused = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--max-spool-size", limit, extra])
        XCTAssertEqual(refused.exitCode, 75, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("the spool is full"), refused.stderr)
        XCTAssertEqual(refused.stdout, "")

        let receiver = UploadReceiver(script: .always(201))
        refusing.release()
        try receiver.start(port: port)
        addTeardownBlock { receiver.stop() }
        let result = try drain.wait(timeout: 40)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(Set(receiver.requests.map(\.body)), Set(bodies), "every file arrived once the endpoint was back")
        XCTAssertEqual(receiver.requests.count, 5)
        XCTAssertEqual(spool.files(in: "incoming"), [])
        XCTAssertEqual(result.stderr.components(separatedBy: "spool full:").count - 1, 1, "logged once when it starts: \(result.stderr)")
        XCTAssertEqual(result.stderr.components(separatedBy: "spool has room again").count - 1, 1, "and once when it ends")
        XCTAssertFalse(FileManager.default.fileExists(atPath: spool.path + "/size-limit"))

        let accepted = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--max-spool-size", limit, extra])
        XCTAssertEqual(accepted.exitCode, 0, "room again: \(accepted.stderr)")
    }

    func testDropOldest_deletesTheOldestPendingItems_countsThem_andUploadsTheNewest() throws {
        let refusing = try RefusingPort(self)
        let port = refusing.port
        let spool = try TestSpool(self)
        let metrics = spool.root + "/m.prom"
        // Five blocks: an item (its blob and json) takes two, so 0, 2 and 4 blocks queued admit
        // three items, and each later file drops one.
        let drain = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0",
             "--max-spool-size", "\(5 * (try block(spool)))", "--when-full", "drop-oldest", "--metrics-file", metrics])
        addTeardownBlock { drain.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: metrics) }, "started")
        // One at a time, oldest first, so the order of the items is the order of the drops.
        for i in 0..<5 {
            try spool.drop("f\(i).bin", payload(100, seed: UInt64(40 + i)))
            XCTAssertTrue(waitUntil(timeout: 20) { spool.files(in: "incoming").isEmpty }, drain.readErr())
            XCTAssertLessThanOrEqual(self.queuedIDs(spool).count, 3, "never more than one item over: \(self.queuedIDs(spool))")
        }
        XCTAssertTrue(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: spool.path + "/size-limit") })
        let status = try SpooldProcess.run(["status", "--spool", spool.path])
        XCTAssertTrue(status.stdout.contains("the oldest pending items are dropped"), status.stdout)

        let receiver = UploadReceiver(script: .always(201))
        refusing.release()
        try receiver.start(port: port)
        addTeardownBlock { receiver.stop() }
        XCTAssertTrue(waitUntil(timeout: 30) { spool.itemFiles.isEmpty }, drain.readErr())
        drain.signal(SIGTERM)
        let result = try drain.wait(timeout: 20)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let names = Set(receiver.requests.map { String($0.target.dropFirst(4)) })
        let dropped = result.stderr.split(separator: "\n").filter { $0.contains("dropped the oldest pending item") }
        XCTAssertEqual(names.count + dropped.count, 5, "each file either arrived or was dropped: \(names) \(result.stderr)")
        XCTAssertEqual(dropped.count, 2, "0, 2, 4 blocks queued admit three; each later file drops one")
        // The oldest pending go first; one of f0-f2 may have been out as the outage probe (never dropped).
        XCTAssertEqual(names.count, 3, "\(names)")
        XCTAssertTrue(names.isSuperset(of: ["f3.bin", "f4.bin"]), "the newest survive: \(names)")
        XCTAssertEqual(try PromFile(metrics)["spoold_dropped_total"], Double(dropped.count))
        XCTAssertEqual(spool.itemFiles, [])
    }
}
