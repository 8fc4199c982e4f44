import Foundation
import XCTest

/// `spoold ls`, `retry --all` and `purge --failed` a thousand items at a time: the text keeps one
/// header and its columns, the JSON stays one array, every failed item is retried or purged once,
/// across batches.
final class ListStreamTests: XCTestCase {
    func testRetryAll_thenPurgeFailed_ofMoreThanABatch_eachItemOnce() throws {
        let spool = try TestSpool(self)
        var files: [String] = []
        for n in 0..<1_200 {
            let path = spool.root + "/g\(n).bin"
            try Data([UInt8(n % 256)]).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let ids = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--move"] + files).lines
        XCTAssertEqual(ids.count, 1_200)
        // Parked by hand, as the daemon would: the pairs moved to failed/.
        for name in spool.files(in: "pending") {
            try FileManager.default.moveItem(atPath: spool.path + "/pending/" + name, toPath: spool.path + "/failed/" + name)
        }
        let retried = try SpooldProcess.run(["retry", "--all", "--spool", spool.path])
        XCTAssertEqual(retried.exitCode, 0, retried.stderr)
        XCTAssertEqual(retried.lines.sorted(), ids.sorted(), "each once")
        XCTAssertEqual(spool.files(in: "failed"), [])
        XCTAssertEqual(spool.files(in: "pending").count, 2_400)

        for name in spool.files(in: "pending") {
            try FileManager.default.moveItem(atPath: spool.path + "/pending/" + name, toPath: spool.path + "/failed/" + name)
        }
        let purged = try SpooldProcess.run(["purge", "--failed", "--spool", spool.path])
        XCTAssertEqual(purged.exitCode, 0, purged.stderr)
        XCTAssertEqual(purged.lines.sorted(), ids.sorted())
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testLs_ofMoreThanABatch_isOneTableAndOneJSONArray() throws {
        let spool = try TestSpool(self)
        var files: [String] = []
        for n in 0..<1_500 {
            let path = spool.root + "/f\(n).bin"
            try Data([UInt8(n % 256)]).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let ids = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--move"] + files).lines
        XCTAssertEqual(ids.count, 1_500)

        let text = try SpooldProcess.run(["ls", "--spool", spool.path])
        XCTAssertEqual(text.exitCode, 0, text.stderr)
        XCTAssertEqual(text.lines.count, 1_501, "a header and a line an item")
        XCTAssertTrue(text.lines[0].hasPrefix("ID "), text.lines[0])
        XCTAssertEqual(text.lines.filter { $0.hasPrefix("ID ") }.count, 1, "one header")
        XCTAssertEqual(Set(text.lines.dropFirst().map { String($0.prefix { $0 != " " }) }), Set(ids))
        let column = text.lines[0].range(of: "STATE")!.lowerBound.utf16Offset(in: text.lines[0])
        XCTAssertTrue(text.lines.dropFirst().allSatisfy { $0.dropFirst(column).hasPrefix("pending  ") }, "the first batch's columns hold")

        let json = try SpooldProcess.run(["ls", "--json", "--spool", spool.path])
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(Set(rows.compactMap { $0["id"] as? String }), Set(ids))
        XCTAssertEqual(rows.count, 1_500)
    }
}
