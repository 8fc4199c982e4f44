import Foundation
import UploadReceiver
import XCTest

/// ENOSPC at the process level, on a real 1 MiB tmpfs (RELIABILITY rule 6): `enqueue` refuses with
/// exit 3 and leaves no half item; the daemon stops (exit 3) instead of acknowledging what it could
/// not persist, and the next start recovers once space is back. Needs root to mount; skipped
/// otherwise. (EIO is injected at store level by the recording file-system tests.)
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
        XCTAssertTrue(full.stderr.contains("No space left on device") && full.stderr.contains("free some space"), full.stderr)
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

    func testDaemon_diskFillsDuringAnUpload_exits3WithoutRecording_thenRecoversWhenSpaceReturns() throws {
        let small = try smallFileSystem()
        let spool = small + "/spool"
        let filler = small + "/filler"
        let source = try TestSpool(self).root + "/report.bin"
        try Data(payload(2000, seed: 5)).write(to: URL(fileURLWithPath: source))
        let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool, source])
        XCTAssertEqual(enqueued.exitCode, 0, enqueued.stderr)
        let id = try XCTUnwrap(enqueued.lines.first)

        // While the request is in flight the disk fills up; the 500 then needs a new json (the
        // attempt's history) written to tmp/, which cannot be made durable.
        let receiver = UploadReceiver(script: ResponseScript { _ in
            if let file = fopen(filler, "w") {
                var chunk = [UInt8](repeating: 0x55, count: 4096)
                while fwrite(&chunk, 1, chunk.count, file) == chunk.count, fflush(file) == 0 {}
                fclose(file)
            }
            return .status(500)
        })
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let options = ["drain", "--spool", spool, "--url", receiver.baseURL + "/up/", "--retry-base", "0.01", "--settle", "0"]

        let stopped = try SpooldProcess.run(options)

        XCTAssertEqual(stopped.exitCode, 3, stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("No space left on device"), stopped.stderr)
        XCTAssertEqual(receiver.requests.count, 1, "no new work is taken after the failure")
        let tmp = try FileManager.default.contentsOfDirectory(atPath: spool + "/tmp")
        XCTAssertEqual(tmp, [], "no half-written json left behind")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spool + "/inflight").sorted(),
                       ["\(id).a1.blob", "\(id).a1.json"], "the outcome was not recorded; the claimed attempt is kept")

        try FileManager.default.removeItem(atPath: filler)
        receiver.setScript(.always(201))
        let drained = try SpooldProcess.run(options)
        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertEqual(receiver.requests.count, 2)
        XCTAssertEqual(receiver.requests.last?.header("Idempotency-Key"), id)
        XCTAssertEqual(receiver.requests.last?.body, payload(2000, seed: 5))
        for folder in ["pending", "inflight", "failed", "tmp"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: "\(spool)/\(folder)"), [], "\(folder)/ is empty")
        }
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
