import Foundation
import UploadReceiver
import XCTest

/// `spoold status`: pending items by age (qshape buckets) and failed items by reason class.
final class StatusShapeTests: XCTestCase {
    /// An id prefix for a creation time `secondsAgo` before now (`20261121T141003123Z`).
    private func idTime(secondsAgo: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmssSSS'Z'"
        return formatter.string(from: Date().addingTimeInterval(-secondsAgo))
    }

    func testStatus_showsPendingByAgeAndFailedByReason_inTextAndJSON() throws {
        let spool = try TestSpool(self)
        // Failed items: one refused with 400, one given up after a 500, one with a broken sidecar.
        let receiver = UploadReceiver(script: ResponseScript { request in
            request.target.hasSuffix("refused.txt") ? .status(400) : request.target.hasSuffix("flaky.txt") ? .status(500) : .status(201)
        })
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        try spool.drop("refused.txt", [1])
        try spool.drop("flaky.txt", [2])
        try spool.drop("bad.txt", [3])
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: spool.incoming + "/bad.txt.meta.json"))
        let drain = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--max-attempts", "1", "--settle", "0"])
        XCTAssertEqual(drain.exitCode, 1, drain.stderr)

        // Pending items: two new, one 3 minutes old, one 100 minutes old (ages come from the id).
        var ids: [String] = []
        for n in 0..<4 {
            let src = spool.root + "/p\(n).txt"
            try Data("x".utf8).write(to: URL(fileURLWithPath: src))
            ids.append(try XCTUnwrap(SpooldProcess.run(["enqueue", "--spool", spool.path, src]).lines.first))
        }
        for (id, age) in [(ids[2], 180.0), (ids[3], 6000.0)] {
            let old = idTime(secondsAgo: age) + id.dropFirst(19)
            for ext in [".a0.blob", ".a0.json"] {
                try FileManager.default.moveItem(atPath: "\(spool.path)/pending/\(id)\(ext)", toPath: "\(spool.path)/pending/\(old)\(ext)")
            }
        }

        let text = try SpooldProcess.run(["status", "--spool", spool.path])
        XCTAssertEqual(text.exitCode, 0, text.stderr)
        let lines = text.lines.map { $0.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        let shape = Array(lines.drop(while: { $0 != "pending by age:" }).dropFirst().prefix(while: { $0.contains(" min ") }))
        XCTAssertEqual(shape, ["0-1 min 2", "1-2 min 0", "2-4 min 1", "4-8 min 0", "8-16 min 0", "16-32 min 0", "32-64 min 0", "64-128 min 1"], text.stdout)
        XCTAssertTrue(lines.contains("http 4xx 1"), text.stdout)
        XCTAssertTrue(lines.contains("http 5xx 1"), text.stdout)
        XCTAssertTrue(lines.contains("sidecar 1"), text.stdout)

        let json = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let buckets = try XCTUnwrap(object["pendingByAge"] as? [[String: Any]])
        XCTAssertEqual(buckets.map { $0["count"] as? Int }, [2, 0, 1, 0, 0, 0, 0, 1])
        XCTAssertEqual(buckets.last?["minMinutes"] as? Int, 64)
        XCTAssertEqual(buckets.last?["maxMinutes"] as? Int, 128)
        XCTAssertEqual(object["failedByReason"] as? [String: Int], ["http 4xx": 1, "http 5xx": 1, "sidecar": 1])
    }
}
