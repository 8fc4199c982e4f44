import Foundation
import SpoolClient
import XCTest

/// The library as a Swift program uses it: through the SpoolClient module alone (this target
/// depends on nothing else), against a spool on disk, compared with `spoold enqueue` itself.
final class SpoolClientTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-client-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let root = self.root
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
    }

    private var spool: String { root + "/spool" }

    private func file(_ name: String, _ text: String) throws -> String {
        let path = root + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func json(_ id: String, in folder: String = "pending") throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(spool)/\(folder)/\(id).a0.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The built `spoold`, beside this test bundle (or `SPOOLD_BINARY`).
    private func spoold(_ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let binary = ProcessInfo.processInfo.environment["SPOOLD_BINARY"] ?? Bundle.main.bundleURL.appendingPathComponent("spoold").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { throw XCTSkip("spoold is not built beside the tests") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    func testEnqueue_writesTheItemExactlyAsSpooldEnqueueDoes_headersFieldsAndContentType() throws {
        let source = try file("Grüße.csv", "a,b\n1,2\n")
        let options = EnqueueOptions(
            headers: ["X-Camera": "trap 7", "X-Amz-Meta-Site": "north"], fields: ["caption": "fox", "n": "1"],
            contentType: "text/csv; charset=utf-8")
        let id = try SpoolClient(spool: spool).enqueue(file: source, options: options)

        let cli = try spoold([
            "enqueue", "--spool", spool, "--header", "X-Camera: trap 7", "--header", "X-Amz-Meta-Site: north",
            "--field", "caption=fox", "--field", "n=1", "--content-type", "text/csv; charset=utf-8", source,
        ])
        XCTAssertEqual(cli.status, 0)
        let cliID = cli.stdout.trimmingCharacters(in: .newlines)

        var ours = try json(id), theirs = try json(cliID)
        XCTAssertEqual(ours["id"] as? String, id)
        XCTAssertTrue(id.hasSuffix("-Gr_e.csv"), id)
        XCTAssertEqual(ours["originalName"] as? String, "Grüße.csv")
        XCTAssertEqual(ours["size"] as? Int, 8)
        XCTAssertEqual(ours["headers"] as? [String: String], ["X-Camera": "trap 7", "X-Amz-Meta-Site": "north"])
        for key in ["id", "createdAt"] { (ours[key], theirs[key]) = (nil, nil) }
        XCTAssertEqual(NSDictionary(dictionary: ours), NSDictionary(dictionary: theirs), "the same json but for the id and time")
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: "\(spool)/pending/\(id).a0.blob")), Data("a,b\n1,2\n".utf8))
        XCTAssertTrue(FileManager.default.fileExists(atPath: source), "copied, not moved")
    }

    /// Durable before it returns: the item is in pending/ and its `add` record is in the index
    /// (the order of the syncs is the store's, tested on its recorded system calls).
    func testEnqueue_isDurableWhenItReturns_andMoveRenamesTheFileIn() throws {
        let sources = try (0..<3).map { try file("f\($0).bin", String(repeating: "x", count: $0 + 1)) }
        let outcomes = try SpoolClient(spool: spool).enqueue(sources, options: EnqueueOptions(move: true))
        let ids = outcomes.compactMap { if case .added(let id) = $0.result { id } else { nil } }
        XCTAssertEqual(ids.count, 3)
        XCTAssertEqual(outcomes.map(\.file), sources)
        let index = try String(contentsOfFile: spool + "/index.wal", encoding: .utf8)
        for id in ids {
            XCTAssertTrue(index.contains(" add \(id) "), "no add record for \(id):\n\(index)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(spool)/pending/\(id).a0.json"))
        }
        XCTAssertFalse(sources.contains { FileManager.default.fileExists(atPath: $0) }, "moved in")
        XCTAssertEqual(EnqueueOutcome.exitCode(of: outcomes), 0)
    }

    func testErrors_meanWhatSpooldEnqueuesExitCodesMean() throws {
        let client = SpoolClient(spool: spool)
        let source = try file("a.txt", "a")

        // 2: refused before the spool is touched.
        for options in [
            EnqueueOptions(headers: ["X-Bad": "one\r\nInjected: yes"]), EnqueueOptions(headers: ["Host": "evil"]),
            EnqueueOptions(contentType: ""), EnqueueOptions(fields: ["": "x"]),
        ] {
            XCTAssertThrowsError(try client.enqueue(file: source, options: options)) { error in
                guard case .invalidArgument = error as? SpoolClientError else { return XCTFail("\(error)") }
                XCTAssertEqual((error as? SpoolClientError)?.exitCode, 2)
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: spool), "nothing was made")

        // 1: one file skipped, the others added.
        let outcomes = try client.enqueue([source, root + "/missing.txt"])
        guard case .skipped(let reason) = outcomes[1].result else { return XCTFail("\(outcomes)") }
        XCTAssertTrue(reason.contains("missing.txt"), reason)
        XCTAssertEqual(EnqueueOutcome.exitCode(of: outcomes), 1)
        XCTAssertThrowsError(try client.enqueue(file: root + "/missing.txt")) { error in
            XCTAssertEqual((error as? SpoolClientError)?.exitCode, 1)
        }

        // 75: at the size limit nothing more is added.
        XCTAssertThrowsError(try client.enqueue(file: source, options: EnqueueOptions(maximumSpoolBytes: 1))) { error in
            XCTAssertEqual(error as? SpoolClientError, .spoolFull(limitBytes: 1))
            XCTAssertEqual((error as? SpoolClientError)?.exitCode, 75)
        }
        XCTAssertEqual(try client.status().pending.count, 1, "the refused file was not added")

        // 3: the spool cannot be used.
        let notAFolder = try file("plain", "x")
        XCTAssertThrowsError(try SpoolClient(spool: notAFolder).enqueue(file: source)) { error in
            guard case .spoolUnusable(_, outOfSpace: false) = error as? SpoolClientError else { return XCTFail("\(error)") }
            XCTAssertEqual((error as? SpoolClientError)?.exitCode, 3)
        }
    }

    func testStatus_readsCountsAndBytes_andNeverCreatesASpool() throws {
        let missing = root + "/nope"
        XCTAssertThrowsError(try SpoolClient(spool: missing).status()) { error in
            XCTAssertEqual((error as? SpoolClientError)?.exitCode, 3)
            XCTAssertTrue("\(error)".contains("no spool at \(missing)"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))

        let client = SpoolClient(spool: spool)
        _ = try client.enqueue([try file("a", "12345"), try file("b", "123")])
        try FileManager.default.createDirectory(atPath: spool + "/incoming/cam", withIntermediateDirectories: true)
        try Data("waiting".utf8).write(to: URL(fileURLWithPath: spool + "/incoming/cam/x.jpg"))

        let status = try client.status()
        XCTAssertEqual(status.pending.count, 2)
        XCTAssertEqual(status.pending.bytes, 8)
        XCTAssertNotNil(status.pending.oldestCreatedAt)
        XCTAssertEqual(status.failed.count, 0)
        XCTAssertNil(status.failed.oldestCreatedAt)
        XCTAssertEqual(status.incomingFiles, 1)
        XCTAssertEqual(status.incomingBytes, 7)
        XCTAssertNil(status.daemonPID)
        XCTAssertNil(status.uploadsPaused)
    }
}
