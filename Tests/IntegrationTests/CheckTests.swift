import Foundation
import UploadReceiver
import XCTest

/// `spoold check [--repair] [--json]`: reports what recovery would do and what it would not,
/// changes nothing without --repair, and --repair runs the daemon's own recovery.
final class CheckTests: XCTestCase {
    private func enqueue(_ spool: TestSpool, count: Int) throws -> [String] {
        var paths: [String] = []
        for i in 0..<count {
            let path = spool.root + "/item-\(i).bin"
            try Data(payload(50 + i, seed: UInt64(i))).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        let result = try SpooldProcess.run(["enqueue", "--spool", spool.path] + paths)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        return result.lines
    }

    private func check(_ spool: TestSpool, _ extra: [String] = []) throws -> SpooldProcess.Result {
        try SpooldProcess.run(["check", "--spool", spool.path] + extra)
    }

    func testCheck_cleanSpool_exits0() throws {
        let spool = try TestSpool(self)
        _ = try enqueue(spool, count: 2)
        let text = try check(spool)
        XCTAssertEqual(text.exitCode, 0, text.stdout + text.stderr)
        XCTAssertTrue(text.stdout.contains("is consistent"), text.stdout)
        let json = try check(spool, ["--json"])
        XCTAssertEqual(json.exitCode, 0)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["clean"] as? Bool, true)
        XCTAssertEqual((object["problems"] as? [Any])?.count, 0)
    }

    func testCheck_splitPair_reportsWhatRecoveryWouldDo_changesNothing_andRepairFixesIt() throws {
        let spool = try TestSpool(self)
        let ids = try enqueue(spool, count: 1)
        // A claim cut between its blob and json renames: blob in inflight/, json still in pending/.
        let cut = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/"],
                                        environment: ["SPOOLD_CRASH_AT": "commit.after-blob-rename"])
        XCTAssertEqual(cut.signal, SIGKILL)
        let before = spool.itemFiles

        let report = try check(spool)

        XCTAssertEqual(report.exitCode, 1, report.stdout)
        XCTAssertTrue(report.stdout.contains("recovery: \(ids[0]): completed an interrupted move"), report.stdout)
        XCTAssertTrue(report.stdout.contains("inflight: \(ids[0]) is in inflight/"), report.stdout)
        XCTAssertEqual(spool.itemFiles, before, "check without --repair changes nothing")

        let repair = try check(spool, ["--repair"])
        XCTAssertEqual(repair.exitCode, 0, repair.stdout + repair.stderr)
        XCTAssertTrue(repair.stdout.contains("repaired: 1 interrupted upload(s) returned to pending/"), repair.stdout)
        XCTAssertEqual(spool.itemFiles, ["pending/\(ids[0]).a1.blob", "pending/\(ids[0]).a1.json"], "the attempt is kept")
        XCTAssertEqual(try check(spool).exitCode, 0, "a second check is clean")
    }

    func testCheck_whileADaemonRuns_leavesItsSpareJsonsOut_butReportsThemWhenNoneRuns() throws {
        let spool = try TestSpool(self)
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", "http://127.0.0.1:9/up/"])
        addTeardownBlock { daemon.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 20) { daemon.readErr().contains("item(s) queued") }, "the daemon is up")
        // Planted after its start-up recovery (which removes leftovers in tmp/).
        for name in ["spare.7", "other"] { try Data([1]).write(to: URL(fileURLWithPath: spool.path + "/tmp/" + name)) }

        let running = try check(spool)
        XCTAssertTrue(running.stdout.contains("tmp/other is not ours to keep"), running.stdout)
        XCTAssertFalse(running.stdout.contains("spare.7"), "a running daemon's spare json: \(running.stdout)")

        daemon.signal(SIGTERM)
        XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0)
        try Data([1]).write(to: URL(fileURLWithPath: spool.path + "/tmp/spare.7"))
        let stopped = try check(spool)
        XCTAssertTrue(stopped.stdout.contains("tmp/spare.7 is not ours to keep"), "no daemon: a leftover: \(stopped.stdout)")
    }

    func testCheckRepair_usesTheInterruptedBudget_notMaxAttempts() throws {
        let spool = try TestSpool(self)
        let ids = try enqueue(spool, count: 2)
        // As daemons killed during three attempts of each leave them: .a3 in inflight/, no answer recorded.
        for id in ids {
            for kind in ["blob", "json"] {
                try FileManager.default.moveItem(
                    atPath: "\(spool.path)/pending/\(id).a0.\(kind)", toPath: "\(spool.path)/inflight/\(id).a3.\(kind)")
            }
        }
        let first = spool.path + "/inflight/\(ids[1]).a3"
        try FileManager.default.moveItem(atPath: first + ".blob", toPath: spool.root + "/aside.blob")
        try FileManager.default.moveItem(atPath: first + ".json", toPath: spool.root + "/aside.json")

        // Three interruptions with --max-attempts 3: still under the default budget of 10.
        let repair = try check(spool, ["--repair"])
        XCTAssertEqual(repair.exitCode, 0, repair.stdout + repair.stderr)
        XCTAssertEqual(spool.itemFiles, ["pending/\(ids[0]).a3.blob", "pending/\(ids[0]).a3.json"])
        let history = try spool.json("pending/\(ids[0]).a3.json")["attempts"] as? [[String: Any]] ?? []
        XCTAssertEqual(history.map { $0["outcome"] as? String }, ["interrupted"])
        let show = try SpooldProcess.run(["show", "--spool", spool.path, ids[0]])
        XCTAssertTrue(show.stdout.contains("attempts  3 (0 answered, 3 interrupted)\n"), show.stdout)

        // The same with --max-interrupted 3: the third interruption uses the budget up.
        try FileManager.default.moveItem(atPath: spool.root + "/aside.blob", toPath: first + ".blob")
        try FileManager.default.moveItem(atPath: spool.root + "/aside.json", toPath: first + ".json")
        let strict = try check(spool, ["--repair", "--max-interrupted", "3"])
        XCTAssertEqual(strict.exitCode, 0, strict.stdout + strict.stderr)
        XCTAssertTrue(strict.stdout.contains("repaired: 1 interrupted upload(s) had used up their attempts: moved to failed/"), strict.stdout)
        XCTAssertTrue(spool.itemFiles.contains("failed/\(ids[1]).a3.json"), "\(spool.itemFiles)")
        let reason = try spool.json("failed/\(ids[1]).a3.json")["failureReason"] as? String
        XCTAssertEqual(reason, "interrupted on attempt 3: spoold stopped mid-upload 3 times (at most 3)")
    }

    func testCheck_garbageJSONSizeMismatchAndStray_areReported_andLeftForTheDaemon() throws {
        let spool = try TestSpool(self)
        let ids = try enqueue(spool, count: 2)
        try Data("{garbage".utf8).write(to: URL(fileURLWithPath: spool.path + "/pending/\(ids[0]).a0.json"))
        let blob = try FileHandle(forWritingTo: URL(fileURLWithPath: spool.path + "/pending/\(ids[1]).a0.blob"))
        try blob.seekToEnd()
        try blob.write(contentsOf: Data([1, 2, 3]))
        try blob.close()
        try Data("notes".utf8).write(to: URL(fileURLWithPath: spool.path + "/failed/notes.txt"))

        let report = try check(spool, ["--json"])

        XCTAssertEqual(report.exitCode, 1, report.stdout)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let problems = try XCTUnwrap(object["problems"] as? [[String: String]])
        XCTAssertEqual(Set(problems.compactMap { $0["kind"] }), ["json", "size", "stray"], "\(problems)")
        XCTAssertTrue(problems.contains { $0["kind"] == "json" && $0["message"]!.contains(ids[0]) })
        XCTAssertTrue(problems.contains { $0["kind"] == "size" && $0["message"]!.contains("has 54 B but the .json says 51 B") })
        XCTAssertTrue(problems.contains { $0["kind"] == "stray" && $0["message"]!.contains("failed/notes.txt") })
        let text = try check(spool)
        XCTAssertTrue(
            text.stdout.hasSuffix(
                "3 problem(s); 'spoold check --repair' fixes 1; 2 malformed item(s), which the daemon parks in failed/ when it tries them\n"),
            text.stdout)
        let repair = try check(spool, ["--repair"])
        XCTAssertEqual(repair.exitCode, 1, "recovery does not fix malformed items; they are still reported: \(repair.stdout)")
        XCTAssertTrue(
            repair.stdout.hasSuffix("2 problem(s) left: 2 malformed item(s), which the daemon parks in failed/ when it tries them\n"),
            repair.stdout)
        XCTAssertEqual(spool.files(in: "failed"), [], "the stray was set aside")
    }

    /// A file that is not an item in a state folder: check suggests --repair only because --repair
    /// sets it aside (it used to suggest it, then say "1 problem(s) left" and leave the file).
    func testCheck_strayInPending_repairSetsItAsideInCorrupt_keepingItsContents() throws {
        let spool = try TestSpool(self)
        let ids = try enqueue(spool, count: 1)
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: spool.path + "/pending/notes.txt"))

        let report = try check(spool)
        XCTAssertEqual(report.exitCode, 1, report.stdout)
        XCTAssertTrue(report.stdout.contains("stray: pending/notes.txt is not an item file"), report.stdout)
        XCTAssertTrue(report.stdout.hasSuffix("1 problem(s); 'spoold check --repair' fixes it\n"), report.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: spool.path + "/pending/notes.txt"), "check alone changes nothing")

        let repair = try check(spool, ["--repair"])
        XCTAssertEqual(repair.exitCode, 0, repair.stdout + repair.stderr)
        XCTAssertTrue(repair.stdout.contains("repaired: pending/notes.txt is not an item file: set it aside as corrupt/pending.notes.txt."), repair.stdout)
        XCTAssertTrue(repair.stdout.hasSuffix("is consistent\n"), repair.stdout)
        let aside = spool.files(in: "corrupt")
        XCTAssertEqual(aside.count, 1, "\(aside)")
        XCTAssertEqual(try String(contentsOfFile: spool.path + "/corrupt/" + XCTUnwrap(aside.first), encoding: .utf8), "keep me")
        XCTAssertEqual(spool.itemFiles, ["pending/\(ids[0]).a0.blob", "pending/\(ids[0]).a0.json"], "the item is untouched")
        XCTAssertEqual(try check(spool).exitCode, 0, "a second check is clean")
    }

    func testCheckRepair_whileADaemonRuns_exits4() throws {
        let spool = try TestSpool(self)
        _ = try enqueue(spool, count: 1)
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/"])
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 30), "the daemon is up and working")

        let repair = try check(spool, ["--repair"])

        XCTAssertEqual(repair.exitCode, 4, repair.stderr)
        XCTAssertTrue(repair.stderr.contains("another spoold"), repair.stderr)
        daemon.signal(SIGTERM)
        XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0)
    }

    /// Folders where spoold expects files: an item's json made a folder (its blob still there),
    /// a folder named like an item in failed/, a FIFO in tmp/, and index.wal made a folder. Each
    /// used to stop every start with EISDIR.
    private func spoolWithFoldersWhereFilesBelong() throws -> (spool: TestSpool, ids: [String]) {
        let spool = try TestSpool(self)
        let ids = try enqueue(spool, count: 2)
        let fm = FileManager.default
        try fm.removeItem(atPath: spool.path + "/pending/\(ids[1]).a0.json")
        try fm.createDirectory(atPath: spool.path + "/pending/\(ids[1]).a0.json/inside", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: spool.path + "/failed/20261121T141003123Z-0000-9f3ab2c1-x.a3.json", withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(spool.path + "/tmp/pipe", 0o600), 0)
        try fm.removeItem(atPath: spool.path + "/index.wal")
        try fm.createDirectory(atPath: spool.path + "/index.wal/inside", withIntermediateDirectories: true)
        return (spool, ids)
    }

    func testFoldersWhereFilesBelong_checkReportsThem_repairSetsThemAside() throws {
        let (spool, ids) = try spoolWithFoldersWhereFilesBelong()

        let report = try check(spool)

        XCTAssertEqual(report.exitCode, 1, report.stdout + report.stderr)
        XCTAssertTrue(report.stdout.contains("index: index.wal is not a regular file"), report.stdout)
        XCTAssertTrue(report.stdout.contains("corrupt: pending/\(ids[1]).a0.json is not a regular file"), report.stdout)
        XCTAssertTrue(report.stdout.contains("corrupt: failed/20261121T141003123Z-0000-9f3ab2c1-x.a3.json is not a regular file"), report.stdout)
        XCTAssertTrue(report.stdout.contains("corrupt: tmp/pipe is not a regular file"), report.stdout)

        let repair = try check(spool, ["--repair"])

        XCTAssertEqual(repair.exitCode, 0, repair.stdout + repair.stderr)
        XCTAssertTrue(repair.stdout.contains("repaired: \(ids[1]): metadata was missing; recreated it"), repair.stdout)
        let aside = spool.files(in: "corrupt")
        XCTAssertEqual(aside.count, 3, "\(aside)")
        XCTAssertTrue(aside.contains { $0.hasPrefix("pending.\(ids[1]).a0.json.") }, "\(aside)")
        let folder = try XCTUnwrap(aside.first { $0.hasPrefix("pending.") })
        XCTAssertTrue(FileManager.default.fileExists(atPath: spool.path + "/corrupt/" + folder + "/inside"),
                      "set aside with its contents, never deleted")
        let root = try FileManager.default.contentsOfDirectory(atPath: spool.path)
        XCTAssertTrue(root.contains { $0.hasPrefix("index.wal.corrupt-") }, "\(root)")
        var isFolder: ObjCBool = true
        XCTAssertTrue(FileManager.default.fileExists(atPath: spool.path + "/index.wal", isDirectory: &isFolder) && !isFolder.boolValue)
        XCTAssertEqual(spool.itemFiles.sorted(), ids.flatMap { ["pending/\($0).a0.blob", "pending/\($0).a0.json"] }.sorted())
        XCTAssertEqual(try check(spool).exitCode, 0, "a second check is clean")
    }

    func testFoldersWhereFilesBelong_drainStartsAndUploadsEveryItem() throws {
        let (spool, ids) = try spoolWithFoldersWhereFilesBelong()
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        addTeardownBlock { receiver.stop() }

        let drained = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"])

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertTrue(drained.stderr.contains("index.wal was not a regular file; set it aside"), drained.stderr)
        XCTAssertTrue(drained.stderr.contains("pending/\(ids[1]).a0.json is not a regular file (directory); set it aside as corrupt/"),
                      drained.stderr)
        XCTAssertEqual(Set(receiver.requests.compactMap { $0.header("Idempotency-Key") }), Set(ids))
        XCTAssertEqual(spool.itemFiles, [])
        XCTAssertEqual(spool.files(in: "corrupt").count, 3)
    }

    /// What the spool's scan found at a start is logged by the engine: a name in inflight/ that is
    /// no item's is left alone, and an entry that cannot be set aside (corrupt/ is a file) is left
    /// where it is; neither stops the start.
    func testEntriesTheStartCannotUse_areLogged_andLeftAlone() throws {
        let spool = try TestSpool(self)
        let ids = try enqueue(spool, count: 1)
        try Data("x".utf8).write(to: URL(fileURLWithPath: spool.path + "/inflight/notes.txt"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: spool.path + "/corrupt"))
        XCTAssertEqual(mkfifo(spool.path + "/tmp/pipe", 0o600), 0)
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        addTeardownBlock { receiver.stop() }

        let drained = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"])

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertTrue(drained.stderr.contains(
            "spoold warning: inflight/notes.txt is not an item file (expected <id>.a<N>.json/.blob); left alone"), drained.stderr)
        XCTAssertTrue(drained.stderr.contains("spoold warning: tmp/pipe is not a regular file (fifo); could not set it aside ("), drained.stderr)
        XCTAssertTrue(drained.stderr.contains("/corrupt is not a folder"), drained.stderr)
        XCTAssertEqual(Set(receiver.requests.compactMap { $0.header("Idempotency-Key") }), Set(ids))
        XCTAssertEqual(spool.files(in: "inflight"), ["notes.txt"])
        XCTAssertEqual(spool.files(in: "tmp"), ["pipe"])
    }

    func testCheck_noSpool_exits3() throws {
        let spool = try TestSpool(self)
        let result = try SpooldProcess.run(["check", "--spool", spool.root + "/nothing-here"])
        XCTAssertEqual(result.exitCode, 3, result.stderr)
        XCTAssertTrue(result.stderr.contains("no spool"), result.stderr)
    }
}

/// `spoold check`'s progress line: on stderr when it is a terminal, never in a pipe or a file.
final class CheckProgressTests: XCTestCase {
    func testProgress_onATerminalOnly_andClearedAtTheEnd() throws {
        let spool = try TestSpool(self)
        let path = spool.root + "/a.bin"
        try Data([1]).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try SpooldProcess.run(["enqueue", "--spool", spool.path, path]).exitCode, 0)

        let plain = try SpooldProcess.run(["check", "--spool", spool.path])
        XCTAssertEqual(plain.exitCode, 0, plain.stderr)
        XCTAssertEqual(plain.stderr, "", "nothing on stderr in a pipe")

        // script(1) runs spoold on a pseudo-terminal and copies what it printed to our stdout.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "'\(SpooldProcess.binaryPath)' check --spool '\(spool.path)'", "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let onTTY = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let clear = "\r\u{1B}[K"
        XCTAssertTrue(onTTY.contains(clear + "check: reading the folders, slice 1 of 1"), onTTY)
        // After the last progress text, the line is cleared before the report is printed.
        let last = try XCTUnwrap(onTTY.range(of: "check: ", options: .backwards))
        let rest = onTTY[last.upperBound...]
        let report = try XCTUnwrap(rest.range(of: "is consistent"))
        XCTAssertTrue(rest[..<report.lowerBound].contains(clear), "cleared before the report: \(onTTY.debugDescription)")
    }
}
