import Foundation
import UploadReceiver
import XCTest

/// enqueue, status, ls, show, purge and help, run as a user would.
final class CommandTests: XCTestCase {
    func testEnqueue_printsOneIDPerFile_andDrainUploadsThemWithTheirHeadersAndFields() throws {
        let spool = try TestSpool(self)
        var paths: [String] = []
        for i in 0..<200 {
            let path = spool.root + "/src-\(i).txt"
            try Data(payload(i, seed: UInt64(i))).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        let result = try SpooldProcess.run(
            ["enqueue", "--spool", spool.path, "--header", "X-Batch: 42", "--field", "site=north"] + paths)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.lines.count, 200)
        XCTAssertEqual(result.lines, result.lines.sorted(), "ids sort in enqueue order")
        XCTAssertEqual(spool.files(in: "pending").count, 400)
        XCTAssertTrue(FileManager.default.fileExists(atPath: paths[0]), "copied, not moved")
        let json = try spool.json("pending/\(result.lines[3]).a0.json")
        XCTAssertEqual(json["headers"] as? [String: String], ["X-Batch": "42"])
        XCTAssertEqual(json["fields"] as? [String: String], ["site": "north"])
        XCTAssertEqual(json["originalName"] as? String, "src-3.txt")

        let receiver = UploadReceiver(script: .always(204))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let drain = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", receiver.baseURL + "/f/{id}"])
        XCTAssertEqual(drain.exitCode, 0, drain.stderr)
        XCTAssertEqual(receiver.requests.count, 200)
        XCTAssertEqual(Set(receiver.requests.map(\.target)), Set(result.lines.map { "/f/\($0)" }))
        XCTAssertTrue(receiver.requests.allSatisfy { $0.header("X-Batch") == "42" })
    }

    func testEnqueue_move_renamesTheFile_andSkipsWhatItCannotAdd() throws {
        let spool = try TestSpool(self)
        let path = spool.root + "/moved.bin"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        let result = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--move", path, spool.root + "/missing.bin", spool.root])
        XCTAssertEqual(result.exitCode, 1, "some files were skipped")
        XCTAssertEqual(result.lines.count, 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertTrue(result.stderr.contains("missing.bin"), result.stderr)
        XCTAssertTrue(result.stderr.contains("not a regular file"), result.stderr)
        XCTAssertEqual(spool.files(in: "pending"), ["\(result.lines[0]).a0.blob", "\(result.lines[0]).a0.json"])
    }

    func testStatusLsShowPurge_describeAndRemoveItems() throws {
        let spool = try TestSpool(self)
        let src = spool.root + "/note.txt"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: src))
        let id = try XCTUnwrap(SpooldProcess.run(["enqueue", "--spool", spool.path, src]).lines.first)

        let status = try SpooldProcess.run(["status", "--spool", spool.path])
        XCTAssertEqual(status.exitCode, 0)
        XCTAssertTrue(status.stdout.contains("pending  1 item(s), 5 B"), status.stdout)
        XCTAssertTrue(status.stdout.contains("not running"), status.stdout)

        let ls = try SpooldProcess.run(["ls", "--spool", spool.path])
        XCTAssertEqual(ls.lines.count, 2)
        XCTAssertTrue(ls.lines[1].hasPrefix(id + "  pending  0"), ls.stdout)

        let show = try SpooldProcess.run(["show", "--spool", spool.path, String(id.prefix(30))])
        XCTAssertEqual(show.exitCode, 0, show.stderr)
        XCTAssertTrue(show.stdout.contains("name      note.txt"), show.stdout)
        let unknown = try SpooldProcess.run(["show", "--spool", spool.path, "20991231T000000000Z-nope"])
        XCTAssertEqual(unknown.exitCode, 1, "an unknown id is the operator's typo, like retry and purge")
        XCTAssertTrue(unknown.stderr.contains("no item '20991231T000000000Z-nope'"), unknown.stderr)
        let second = try XCTUnwrap(SpooldProcess.run(["enqueue", "--spool", spool.path, src]).lines.first)
        let common = String(zip(id, second).prefix { $0 == $1 }.map(\.0))
        let ambiguous = try SpooldProcess.run(["show", "--spool", spool.path, common])
        XCTAssertEqual(ambiguous.exitCode, 1, ambiguous.stderr)
        XCTAssertTrue(ambiguous.stderr.contains("'\(common)' matches 2 items"), ambiguous.stderr)
        XCTAssertEqual(try SpooldProcess.run(["purge", "--spool", spool.path, second]).exitCode, 0)

        let purge = try SpooldProcess.run(["purge", "--spool", spool.path, id])
        XCTAssertEqual(purge.exitCode, 0, purge.stderr)
        XCTAssertEqual(spool.itemFiles, [])
        let again = try SpooldProcess.run(["purge", "--spool", spool.path, id])
        XCTAssertEqual(again.exitCode, 1)
        XCTAssertTrue(again.stderr.contains("no item"), again.stderr)
    }

    func testEveryCommandHasHelp_andInspectionNeverCreatesASpool() throws {
        for command in ["run", "drain", "enqueue", "status", "ls", "show", "retry", "purge"] {
            let result = try SpooldProcess.run([command, "--help"])
            XCTAssertEqual(result.exitCode, 0, command)
            XCTAssertTrue(result.stdout.hasPrefix("Usage: spoold \(command)"), "\(command): \(result.stdout.prefix(80))")
        }
        let top = try SpooldProcess.run(["--help"])
        XCTAssertTrue(top.stdout.contains("drain"), top.stdout)
        let spool = try TestSpool(self)
        let missing = try SpooldProcess.run(["status", "--spool", spool.root + "/nope"])
        XCTAssertEqual(missing.exitCode, 3)
        XCTAssertTrue(missing.stderr.contains("no spool at"), missing.stderr)
        XCTAssertTrue(
            missing.stderr.contains("(check --spool or SPOOLD_SPOOL; 'spoold run', 'drain' and 'enqueue' create one, this command does not)"),
            missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: spool.root + "/nope"))
    }

    /// The top-level help lists what the program takes besides commands, every exit code, and
    /// both kinds of destination.
    func testTopLevelHelp_listsVersion_everyExitCode_andS3() throws {
        let top = try SpooldProcess.run(["--help"])
        XCTAssertEqual(top.exitCode, 0)
        let flat = top.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(flat.contains("Usage: spoold <command> [options] spoold --version"), top.stdout)
        XCTAssertTrue(flat.contains("--version Print the version ('spoold VERSION') and exit."), top.stdout)
        XCTAssertTrue(flat.contains("or to an S3-compatible store (--url s3://BUCKET/PREFIX)"), top.stdout)
        for code in ["0 ok", "1 partly done", "2 usage error", "3 spool or disk error", "4 another spoold", "5 drain stopped",
                     "75 enqueue --max-spool-size: the spool is full"] {
            XCTAssertTrue(flat.contains(code), "exit code '\(code)' in:\n\(top.stdout)")
        }
        let version = try SpooldProcess.run(["--version"])
        XCTAssertEqual(version.exitCode, 0)
        XCTAssertTrue(version.stdout.hasPrefix("spoold "), version.stdout)
    }

    func testSpoolWithAMissingParent_isNamedAsSuch_andNothingIsCreated() throws {
        let spool = try TestSpool(self)
        let path = spool.root + "/missing/parent/spool"
        for command in [["drain", "--url", "http://127.0.0.1:1/"], ["enqueue", "/etc/hostname"]] {
            let result = try SpooldProcess.run(command + ["--spool", path])
            XCTAssertEqual(result.exitCode, 3, result.stderr)
            XCTAssertTrue(
                result.stderr.contains("cannot create the spool \(path): its parent folder \(spool.root)/missing/parent does not exist"),
                result.stderr)
            XCTAssertFalse(result.stderr.contains("no spool at"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: spool.root + "/missing"))
    }

    func testHelp_marksRepeatableOptionsOnce() throws {
        for command in ["run", "drain", "enqueue"] {
            let help = try SpooldProcess.run([command, "--help"]).stdout
            let flat = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            XCTAssertFalse(flat.contains("(repeatable) (repeatable)"), "\(command):\n\(help)")
            if command != "enqueue" {
                XCTAssertTrue(flat.contains("never stored or logged. (repeatable)"), "\(command):\n\(help)")
            }
        }
    }

    /// Ids keep only an ASCII hint of the name (the layout is a public interface), so `ls` shows
    /// the original name beside each id, escaped like a log line.
    func testLs_showsTheOriginalNameBesideTheId_whateverItsLetters() throws {
        let spool = try TestSpool(self)
        let names = ["Grüße – 日本語 ✓.txt", "été.csv", "line\nbreak.txt"]
        var paths: [String] = []
        for name in names {
            let path = spool.root + "/" + name
            try Data(name.utf8).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        let ids = try SpooldProcess.run(["enqueue", "--spool", spool.path] + paths).lines
        XCTAssertEqual(ids.count, 3)
        XCTAssertTrue(ids[0].hasSuffix("-Gr_e_.txt"), "ids are as they were: \(ids)")

        let ls = try SpooldProcess.run(["ls", "--spool", spool.path])
        XCTAssertEqual(ls.exitCode, 0, ls.stderr)
        XCTAssertEqual(ls.lines.count, 4, ls.stdout)
        XCTAssertTrue(ls.lines[0].hasSuffix("LAST ERROR  NAME"), ls.stdout)
        for (id, name) in zip(ids, ["Grüße – 日本語 ✓.txt", "été.csv", "line\\nbreak.txt"]) {
            let line = try XCTUnwrap(ls.lines.first { $0.hasPrefix(id + " ") }, ls.stdout)
            XCTAssertTrue(line.hasSuffix("  " + name), "\(line) ends with \(name)")
        }
    }

    func testLs_emptySpool_saysSo_andJSONIsAnEmptyArray() throws {
        let spool = try TestSpool(self)
        let src = spool.root + "/gone.txt"
        try Data("x".utf8).write(to: URL(fileURLWithPath: src))
        let id = try XCTUnwrap(SpooldProcess.run(["enqueue", "--spool", spool.path, src]).lines.first)
        XCTAssertEqual(try SpooldProcess.run(["purge", "--spool", spool.path, id]).exitCode, 0)

        let text = try SpooldProcess.run(["ls", "--spool", spool.path])
        XCTAssertEqual(text.exitCode, 0)
        XCTAssertEqual(text.stdout, "no items in pending/, inflight/, failed/\n")
        let failed = try SpooldProcess.run(["ls", "failed", "--spool", spool.path])
        XCTAssertEqual(failed.stdout, "no items in failed/\n")
        let json = try SpooldProcess.run(["ls", "--json", "--spool", spool.path])
        XCTAssertEqual(json.stdout, "[]\n")
    }
}
