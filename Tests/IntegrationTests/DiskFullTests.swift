import Foundation
import Synchronization
import UploadReceiver
import XCTest

/// ENOSPC at the process level, on a real 1 MiB tmpfs: `enqueue` refuses with exit 3 and leaves no
/// half item; the daemon starts on a full disk, keeps uploading and recording outcomes (from the
/// index reserve), pauses taking files in until room frees, then takes them. Needs root to mount;
/// skipped otherwise. (EIO and a failed fsync, which still stop the daemon, are injected at store
/// level by the recording file-system tests, as is ENOSPC where no tmpfs can be mounted.)
final class DiskFullTests: XCTestCase {
    /// Mounts a fresh 1 MiB tmpfs and returns its path; unmounted at teardown.
    private func smallFileSystem() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-full-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", dir]
        mount.standardError = FileHandle.nullDevice
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else {
            try? FileManager.default.removeItem(atPath: dir)
            throw XCTSkip("cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN); the disk-full tests need one")
        }
        addTeardownBlock {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = ["-l", dir]
            try? umount.run()
            umount.waitUntilExit()
            try? FileManager.default.removeItem(atPath: dir)
        }
        return dir
    }

    func testEnqueue_diskFull_exits3WithAClearMessageAndLeavesNoHalfItem() throws {
        let small = try smallFileSystem()
        let spool = small + "/spool"
        let sources = try TestSpool(self)  // on the ordinary temporary file system: copied, not renamed
        var paths: [String] = []
        for i in 0..<3 {
            let path = sources.root + "/big-\(i).bin"
            try Data(payload(400_000, seed: UInt64(i))).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }

        let full = try SpooldProcess.run(["enqueue", "--spool", spool] + paths)

        XCTAssertEqual(full.exitCode, 3, full.stderr)
        XCTAssertEqual(full.stdout, "", "no id is printed: nothing was acknowledged")
        XCTAssertTrue(full.stderr.contains("No space left on device") && full.stderr.contains("is full")
                      && full.stderr.contains("nothing was added: free some space"), full.stderr)
        for folder in ["pending", "inflight", "failed", "tmp"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: "\(spool)/\(folder)"), [], "\(folder)/ is empty")
        }
        let index = (try? String(contentsOfFile: spool + "/index.wal", encoding: .utf8)) ?? ""
        XCTAssertFalse(index.contains(" add "), "no add record: \(index)")
        XCTAssertTrue(paths.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "the sources are untouched")

        // The space the failed call used is given back: a file that fits is accepted at once.
        let fits = try SpooldProcess.run(["enqueue", "--spool", spool, paths[0]])
        XCTAssertEqual(fits.exitCode, 0, fits.stderr)
        XCTAssertEqual(fits.lines.count, 1)
        XCTAssertEqual(try SpooldProcess.run(["check", "--spool", spool]).exitCode, 0)
    }

    /// Fills the file system holding `path` to the last byte (a file at `path`).
    private static func fillUp(_ path: String) {
        guard let file = fopen(path, "w") else { return XCTFail("cannot create \(path)") }
        var chunk = [UInt8](repeating: 0x55, count: 4096)
        while fwrite(&chunk, 1, chunk.count, file) == chunk.count, fflush(file) == 0 {}
        // The last partial page, byte by byte.
        while fwrite(&chunk, 1, 1, file) == 1, fflush(file) == 0 {}
        fclose(file)
    }

    func testDaemon_diskFillsDuringEveryUpload_outcomesAreStillRecorded_fromTheIndexReserve() throws {
        let small = try smallFileSystem()
        let spool = small + "/spool"
        let filler = small + "/filler"
        let source = try TestSpool(self).root + "/report.bin"
        try Data(payload(2000, seed: 5)).write(to: URL(fileURLWithPath: source))
        let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool, source])
        XCTAssertEqual(enqueued.exitCode, 0, enqueued.stderr)
        let id = try XCTUnwrap(enqueued.lines.first)

        // While each request is in flight the disk fills up (a producer writing beside the spool);
        // each 500 then needs a new json (the attempt's history) and an index record, and so does
        // the final 201. Without the reserve the daemon stopped (exit 3) at the first one.
        let answers = Collected<Int>()
        let receiver = UploadReceiver(script: ResponseScript { _ in
            DiskFullTests.fillUp(filler)
            answers.append(0)
            return .status(answers.values.count < 3 ? 500 : 201)
        })
        try receiver.start()
        addTeardownBlock { receiver.stop() }

        let drained = try SpooldProcess.run(
            ["drain", "--spool", spool, "--url", receiver.baseURL + "/up/", "--retry-base", "0.01", "--settle", "0"])

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertEqual(receiver.requests.count, 3, "two 500s recorded and retried, then the 201 recorded")
        XCTAssertEqual(receiver.requests.last?.header("Idempotency-Key"), id)
        XCTAssertEqual(receiver.requests.last?.body, payload(2000, seed: 5))
        for folder in ["pending", "inflight", "failed", "tmp"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: "\(spool)/\(folder)"), [], "\(folder)/ is empty")
        }
        XCTAssertEqual(try SpooldProcess.run(["check", "--spool", spool]).exitCode, 0)
    }

    func testDaemon_startsOnAFullDisk_uploadsWhatIsQueued_thenTakesTheFilesWaitingInIncoming() throws {
        let small = try smallFileSystem()
        let spool = small + "/spool"
        let sources = try TestSpool(self)
        var paths: [String] = []
        for i in 0..<3 {
            paths.append(sources.root + "/queued-\(i).bin")
            try Data(payload(100_000, seed: UInt64(i))).write(to: URL(fileURLWithPath: paths[i]))
        }
        let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool, "--header", "X-Source: enqueue"] + paths)
        XCTAssertEqual(enqueued.exitCode, 0, enqueued.stderr)
        // A daemon dies right after claiming them: the next start must return them to pending/,
        // which rewrites their jsons, on a full disk.
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let options = ["drain", "--spool", spool, "--url", receiver.baseURL + "/up/", "--settle", "0"]
        let cut = try SpooldProcess.run(options, environment: ["SPOOLD_CRASH_AT": "commit.after-folder-sync"])
        XCTAssertEqual(cut.signal, SIGKILL, cut.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spool + "/inflight").count, 6)
        let dropped = [payload(700, seed: 40), payload(900, seed: 41)]
        for (i, bytes) in dropped.enumerated() {
            try Data(bytes).write(to: URL(fileURLWithPath: "\(spool)/incoming/.part-\(i)"))
            XCTAssertEqual(rename("\(spool)/incoming/.part-\(i)", "\(spool)/incoming/dropped-\(i).bin"), 0)
        }
        Self.fillUp(small + "/filler")

        // Full: enqueue refuses, with its documented code and the cause.
        let refused = try SpooldProcess.run(["enqueue", "--spool", spool, paths[0]])
        XCTAssertEqual(refused.exitCode, 3, refused.stderr)
        XCTAssertEqual(refused.stdout, "")
        XCTAssertTrue(refused.stderr.contains("is full") && refused.stderr.contains("No space left on device")
                      && refused.stderr.contains("nothing was added"), refused.stderr)

        // While the first upload is in flight (one at a time, so nothing has freed space yet),
        // intake is paused and `spoold status` says so.
        let statusDuringUpload = Collected<String>()
        receiver.setScript(ResponseScript { _ in
            if statusDuringUpload.values.isEmpty, let status = try? SpooldProcess.run(["status", "--json", "--spool", spool]),
               let text = try? SpooldProcess.run(["status", "--spool", spool]) {
                statusDuringUpload.append(status.stdout)
                statusDuringUpload.append(text.stdout)
            }
            return .status(201)
        })

        let drained = try SpooldProcess.run(options + ["--concurrency", "1"])

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertEqual(drained.stderr.components(separatedBy: "intake paused: the spool's file system is full").count - 1, 1,
                       "said once: \(drained.stderr)")
        XCTAssertEqual(drained.stderr.components(separatedBy: "intake resumed").count - 1, 1, "said once: \(drained.stderr)")
        XCTAssertEqual(statusDuringUpload.values.count, 2)
        XCTAssertTrue(statusDuringUpload.values.last?.contains("intake   paused since") == true
                      && statusDuringUpload.values.last?.contains("the spool's file system is full") == true,
                      statusDuringUpload.values.last ?? "")
        let status = try XCTUnwrap(statusDuringUpload.values.first)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
        XCTAssertEqual((object["intake"] as? [String: Any])?["paused"] as? Bool, true, status)
        XCTAssertEqual((object["incoming"] as? [String: Any])?["count"] as? Int, 2, "the files wait in incoming/: \(status)")
        // Everything arrived: the queued items (with enqueue's header) and the dropped files.
        let bodies = receiver.requests.filter { $0.answeredStatus == 201 }.map(\.body)
        for i in 0..<3 { XCTAssertTrue(bodies.contains(payload(100_000, seed: UInt64(i))), "queued item \(i)") }
        for bytes in dropped { XCTAssertTrue(bodies.contains(bytes), "a file dropped into incoming/") }
        XCTAssertEqual(receiver.requests.filter { $0.header("X-Source") == "enqueue" }.count, 3)
        for folder in ["incoming", "pending", "inflight", "failed", "tmp"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: "\(spool)/\(folder)"), [], "\(folder)/ is empty")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: spool + "/intake-paused"), "the marker is gone")
        XCTAssertEqual(try SpooldProcess.run(["check", "--spool", spool]).exitCode, 0)
    }

    func testReadOnlySpool_enqueueAndDrainNameTheCauseAndThePath() throws {
        let small = try smallFileSystem()
        let spool = small + "/spool"
        let source = try TestSpool(self).root + "/note.txt"
        try Data("x".utf8).write(to: URL(fileURLWithPath: source))
        XCTAssertEqual(try SpooldProcess.run(["enqueue", "--spool", spool, source]).exitCode, 0)
        let remount = Process()
        remount.executableURL = URL(fileURLWithPath: "/bin/mount")
        remount.arguments = ["-o", "remount,ro", small]
        try remount.run()
        remount.waitUntilExit()
        XCTAssertEqual(remount.terminationStatus, 0)

        let enqueue = try SpooldProcess.run(["enqueue", "--spool", spool, source])
        let drain = try SpooldProcess.run(["drain", "--spool", spool, "--url", "http://127.0.0.1:1/"])
        let create = try SpooldProcess.run(["enqueue", "--spool", small + "/new", source])

        for result in [enqueue, drain] {
            XCTAssertEqual(result.exitCode, 3)
            XCTAssertTrue(result.stderr.contains("cannot write to \(spool): Read-only file system (EROFS)"), result.stderr)
            XCTAssertFalse(result.stderr.contains("unlink") || result.stderr.contains("open "), "no internal call: \(result.stderr)")
        }
        XCTAssertEqual(create.exitCode, 3)
        XCTAssertTrue(create.stderr.contains("cannot create the spool \(small)/new: Read-only file system (EROFS)"), create.stderr)
    }
}

/// What the receiver's script threads hand back to the test.
private final class Collected<Element: Sendable>: Sendable {
    private let stored = Mutex<[Element]>([])
    func append(_ element: Element) { stored.withLock { $0.append(element) } }
    var values: [Element] { stored.withLock { $0 } }
}
