import Foundation
import UploadReceiver
import XCTest

/// A direct upload seen from outside, with the real binary: `ls`, `show`, `status` and `check` while one is
/// under way, then `kill -9` and the next start (docs/spool.md "Direct uploads").
final class DirectUploadCommandTests: XCTestCase {
    func testDirectUploadUnderWay_isShownByLsAndShow_checkIsClean_andAKillLosesNothing() throws {
        let spool = try TestSpool(self)
        // The first request is never answered; every later one is accepted.
        let receiver = UploadReceiver(script: .sequence([.faulted(.neverAnswer)], thenAlways: .status(201)))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let options = ["--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"]
        let daemon = try SpooldProcess(["run"] + options)
        addTeardownBlock { daemon.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 20) { daemon.readErr().contains("queued") }, daemon.readErr())

        try FileManager.default.createDirectory(atPath: spool.incoming + "/cam7", withIntermediateDirectories: true)
        let body = payload(3000, seed: 7)
        try spool.drop("cam7/fox.jpg", body)
        XCTAssertTrue(waitUntil(timeout: 20) { receiver.requests.count == 1 }, daemon.readErr())
        let blobs = spool.files(in: "inflight")
        XCTAssertEqual(blobs.count, 1, "a lone blob: \(blobs)")
        XCTAssertTrue(blobs[0].hasSuffix(".a1.blob"), "\(blobs)")
        XCTAssertEqual(spool.files(in: "incoming/cam7"), [])

        let ls = try SpooldProcess.run(["ls", "--spool", spool.path])
        XCTAssertTrue(ls.stdout.contains("sent directly from incoming/cam7/fox.jpg"), ls.stdout)
        let id = String(blobs[0].dropLast(".a1.blob".count))
        let show = try SpooldProcess.run(["show", "--spool", spool.path, id])
        XCTAssertTrue(show.stdout.contains("none yet: sent directly from incoming/cam7/fox.jpg"), show.stdout)
        // The daemon rewrites its counts at most once a second: wait for the one that has the upload.
        var status = ""
        let counted = waitUntil(timeout: 20) {
            status = (try? SpooldProcess.run(["status", "--spool", spool.path, "--json"]).stdout) ?? ""
            let object = (try? JSONSerialization.jsonObject(with: Data(status.utf8))) as? [String: Any]
            return (object?["inflight"] as? [String: Any])?["count"] as? Int == 1
        }
        XCTAssertTrue(counted, "counted as in flight: \(status)")
        let check = try SpooldProcess.run(["check", "--spool", spool.path])
        XCTAssertEqual(check.exitCode, 0, "a direct upload is not a problem while the daemon runs:\n\(check.stdout)")

        daemon.signal(SIGKILL)
        _ = try daemon.wait(timeout: 10)
        let drained = try SpooldProcess.run(["drain"] + options, timeout: 30)
        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        let accepted = receiver.requests.filter { $0.answeredStatus == 201 }
        XCTAssertEqual(accepted.map(\.target), ["/up/cam7/fox.jpg"], "sent again under its own name")
        XCTAssertEqual(accepted.first?.body, body)
        XCTAssertEqual(Set(receiver.requests.compactMap { $0.header("Idempotency-Key") }), [id], "under the same id")
        for folder in ["pending", "inflight", "failed", "tmp"] { XCTAssertEqual(spool.files(in: folder), [], folder) }
    }
}
