import Foundation
import UploadReceiver
import XCTest

/// What producers do to incoming/, through the real binary on its default `--settle`: writers that
/// keep a file open, files written in place, folders.
final class IncomingTests: XCTestCase {
    private func startReceiver() throws -> UploadReceiver {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    private func startDaemon(_ spool: TestSpool, _ receiver: UploadReceiver, _ extra: [String] = []) throws -> SpooldProcess {
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "-v"] + extra)
        addTeardownBlock { daemon.signal(SIGKILL) }
        return daemon
    }

    private func stop(_ daemon: SpooldProcess) throws {
        daemon.signal(SIGTERM)
        let result = try daemon.wait(timeout: 30)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
    }

    func testRun_fileHeldOpenForWritingWithOldMtime_waitsForItsWriterToClose() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let bytes = Array("time,value\n1,2\n3,4\n5,67\n".utf8)
        XCTAssertEqual(bytes.count, 24)
        // A writer that wrote a header and paused long ago: its mtime is far past --settle.
        let writer = open(spool.incoming + "/reading.csv", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(writer, 0)
        defer { close(writer) }
        XCTAssertEqual(write(writer, bytes, 12), 12)
        XCTAssertEqual(setModificationTime(fd: writer, secondsAgo: 60), 0)
        // A complete file beside it, also old: its upload shows the start-up scan has been made.
        try spool.drop("marker.txt", [1, 2, 3])
        XCTAssertEqual(setModificationTime(path: spool.incoming + "/marker.txt", secondsAgo: 60), 0)

        let daemon = try startDaemon(spool, receiver)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 30), daemon.readErr())
        XCTAssertEqual(receiver.requests.map(\.target), ["/up/marker.txt"])
        // The start-up scan found it held, and so does the next look --settle (2 s) later.
        XCTAssertTrue(waitUntil(timeout: 30) { daemon.readErr().components(separatedBy: "reading.csv is still open for writing").count >= 3 },
                      daemon.readErr())
        XCTAssertEqual(receiver.requests.count, 1)
        XCTAssertEqual(spool.files(in: "incoming"), ["reading.csv"])

        XCTAssertEqual(bytes[12...].withUnsafeBytes { write(writer, $0.baseAddress, 12) }, 12)
        XCTAssertEqual(close(writer), 0)
        XCTAssertTrue(receiver.waitForRequests(count: 2, timeout: 30), daemon.readErr())
        let reading = try XCTUnwrap(receiver.requests.first { $0.target == "/up/reading.csv" })
        XCTAssertEqual(reading.body, bytes, "every byte the writer wrote, not the first part")
        try stop(daemon)
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testRun_fileRenamedInWhileStillOpenForWriting_waitsForItsWriterToClose() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let daemon = try startDaemon(spool, receiver)
        try spool.drop("marker.txt", [1])
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 30), daemon.readErr())
        // Renamed in first, written after: the rename alone does not make it complete.
        let staging = spool.incoming + "/.late.bin.part"
        let writer = open(staging, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(writer, 0)
        XCTAssertEqual(rename(staging, spool.incoming + "/late.bin"), 0)
        XCTAssertTrue(waitUntil(timeout: 30) { daemon.readErr().contains("late.bin was renamed in but is still open for writing") },
                      daemon.readErr())
        let bytes = payload(100_000, seed: 9)
        XCTAssertEqual(bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }, bytes.count)
        XCTAssertEqual(close(writer), 0)
        XCTAssertTrue(receiver.waitForRequests(count: 2, timeout: 30), daemon.readErr())
        XCTAssertEqual(receiver.requests.first { $0.target == "/up/late.bin" }?.body, bytes)
        try stop(daemon)
    }

    func testDrain_fileWrittenInPlaceBeforeStart_andClosed_isTakenAtOnce_whateverTheSettle() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let bytes = payload(5000, seed: 3)
        // Written in place and closed just before the daemon runs (a build step, then `spoold
        // drain`): no inotify event announces it, its mtime is fresh, and no process holds it.
        try Data(bytes).write(to: URL(fileURLWithPath: spool.incoming + "/in-place.dat"))
        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "3600", "--max-time", "60"])
        XCTAssertEqual(result.exitCode, 0, "not held back for --settle: \(result.stderr)")
        XCTAssertEqual(receiver.requests.map(\.target), ["/up/in-place.dat"])
        XCTAssertEqual(receiver.requests.first?.body, bytes)
        XCTAssertEqual(spool.itemFiles, [])
    }

    // MARK: Helpers

    private func setModificationTime(fd: Int32, secondsAgo: Int) -> Int32 {
        var times = [timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0), timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0)]
        return futimens(fd, &times)
    }

    private func setModificationTime(path: String, secondsAgo: Int) -> Int32 {
        var times = [timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0), timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0)]
        return utimensat(AT_FDCWD, path, &times, 0)
    }
}

/// Subfolders of incoming/: walked, watched, named by their path.
final class IncomingFolderTests: XCTestCase {
    private func startReceiver() throws -> UploadReceiver {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    /// Writes a file in place and backdates it, as `tar -x` or `rsync -a` leave them.
    private func place(_ spool: TestSpool, _ path: String, _ bytes: [UInt8]) throws {
        let full = spool.incoming + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        var times = [timespec(tv_sec: time(nil) - 60, tv_nsec: 0), timespec(tv_sec: time(nil) - 60, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, full, &times, 0), 0)
    }

    func testDrain_filesInSubfolders_uploadedUnderTheirPath_dotAndLinkedFoldersLeftAlone() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let files: [(String, [UInt8])] = [
            ("top.txt", [1]), ("2026-11-23/cam7/fox.jpg", payload(3000, seed: 1)), ("a/b c/d;e.txt", payload(10, seed: 2)),
        ]
        try place(spool, "2026-11-23/cam7/fox.jpg.meta.json", Array(#"{"headers":{"X-Camera":"7"}}"#.utf8))
        for (path, bytes) in files { try place(spool, path, bytes) }
        try place(spool, ".wip/half.txt", [9])          // a dot-folder is a writer's work in progress
        try place(spool, "day/.partial/half.txt", [9])  // at any depth
        let outside = spool.root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data([7]).write(to: URL(fileURLWithPath: outside + "/secret.txt"))
        XCTAssertEqual(symlink(outside, spool.incoming + "/linked"), 0)

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--keep-done"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(Set(receiver.requests.map(\.target)),
                       ["/up/top.txt", "/up/2026-11-23/cam7/fox.jpg", "/up/a/b%20c/d%3Be.txt"])
        for (path, bytes) in files {
            XCTAssertEqual(receiver.requests.first { percentDecode($0.target) == "/up/" + path }?.body, bytes, path)
        }
        XCTAssertEqual(receiver.requests.first { $0.target.hasSuffix("fox.jpg") }?.header("X-Camera"), "7", "its sidecar")
        XCTAssertEqual(spool.files(in: "incoming/2026-11-23/cam7"), [], "the sidecar is consumed with its file")
        let names = try spool.files(in: "done").filter { $0.hasSuffix(".json") }.map { try spool.json("done/" + $0)["originalName"] as? String }
        XCTAssertEqual(Set(names.compactMap { $0 }), Set(files.map(\.0)))
        XCTAssertTrue(FileManager.default.fileExists(atPath: spool.incoming + "/.wip/half.txt"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: spool.incoming + "/day/.partial/half.txt"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: outside + "/secret.txt"), "a symlinked folder is never followed")
        // Emptied folders stay: a producer may still be writing into them.
        XCTAssertTrue(FileManager.default.fileExists(atPath: spool.incoming + "/2026-11-23/cam7"))

        // `status` counts what the daemon would take: subfolders in, dot-folders and links out.
        try place(spool, "later/one.txt", [1, 2])
        try place(spool, "later/deeper/two.txt", [3, 4, 5])
        let status = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
        XCTAssertEqual((object["incoming"] as? [String: Any])?["count"] as? Int, 2, status.stdout)
        XCTAssertEqual((object["incoming"] as? [String: Any])?["bytes"] as? Int, 5, status.stdout)
    }

    func testRun_foldersMadeOrRenamedInWhileRunning_areWatchedAndTaken() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/in/{name}"])
        addTeardownBlock { daemon.signal(SIGKILL) }
        try spool.drop("ready.txt", [0])
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 30), daemon.readErr())

        // mkdir -p, then files dropped the Maildir way and written in place, at two depths.
        try FileManager.default.createDirectory(atPath: spool.incoming + "/day/cam7", withIntermediateDirectories: true)
        try spool.drop("day/cam7/fox.jpg", [1, 2])
        try Data([3]).write(to: URL(fileURLWithPath: spool.incoming + "/day/note.txt"))
        // A whole tree built under a dot-name, then renamed in (tar -x into a staging folder).
        try FileManager.default.createDirectory(atPath: spool.incoming + "/.batch/x", withIntermediateDirectories: true)
        try Data([4]).write(to: URL(fileURLWithPath: spool.incoming + "/.batch/x/one.bin"))
        try Data([5]).write(to: URL(fileURLWithPath: spool.incoming + "/.batch/two.bin"))
        XCTAssertEqual(rename(spool.incoming + "/.batch", spool.incoming + "/batch"), 0)

        XCTAssertTrue(receiver.waitForRequests(count: 5, timeout: 30), daemon.readErr())
        XCTAssertEqual(Set(receiver.requests.map(\.target)),
                       ["/in/ready.txt", "/in/day/cam7/fox.jpg", "/in/day/note.txt", "/in/batch/x/one.bin", "/in/batch/two.bin"])
        daemon.signal(SIGTERM)
        XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0)
    }

    /// A tree of 300 folders, one file each, renamed into incoming/ while the endpoint is down
    /// (everything announced is taken, in batches of up to 1,024) by a daemon whose descriptor
    /// limit is 256, soft and hard: every file is taken. Each batch opens a subfolder once and
    /// takes files from at most a quarter of the limit in folders; the daemon used to open one
    /// descriptor per file and stop with EMFILE ("Too many open files") after ~70.
    func testDrain_treeOfManyFolders_underALowDescriptorLimit_isTakenWhole() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else {
            throw XCTSkip("prlimit (util-linux) is not installed")
        }
        let spool = try TestSpool(self)
        let stage = spool.incoming + "/.tree"
        for i in 0..<300 {
            try FileManager.default.createDirectory(atPath: stage + "/d\(i)", withIntermediateDirectories: true)
            try Data([UInt8(i % 256)]).write(to: URL(fileURLWithPath: stage + "/d\(i)/f.bin"))
        }
        XCTAssertEqual(rename(stage, spool.incoming + "/tree"), 0)
        let port = try RefusingPort(self).port

        // Nothing listens on the port: the drain takes the tree in and waits; it is stopped once
        // all 300 are queued (a --max-time would be waited out whatever the time they took).
        let drain = try SpooldProcess(
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0", "--max-time", "60"],
            wrapper: ["/usr/bin/prlimit", "--nofile=256:256"])
        addTeardownBlock { drain.signal(SIGKILL) }
        let queued = waitUntil(timeout: 50) {
            spool.files(in: "pending").filter { $0.hasSuffix(".json") }.count == 300 || !drain.process.isRunning
        }
        drain.signal(SIGTERM)
        let result = try drain.wait(timeout: 30)

        XCTAssertTrue(queued, "neither all 300 queued nor an exit: \(result.stderr)")
        XCTAssertEqual(result.exitCode, 5, result.stderr)  // stopped with everything queued
        XCTAssertFalse(result.stderr.contains("Too many open files"), result.stderr)
        XCTAssertEqual(spool.files(in: "pending").filter { $0.hasSuffix(".json") }.count, 300)
    }
}

/// incoming/ itself replaced under a running daemon.
final class IncomingReplacedTests: XCTestCase {
    func testRun_incomingRemovedAndMadeAgainOrMovedIn_theNewFolderIsWatched() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/"])
        addTeardownBlock { daemon.signal(SIGKILL) }
        try spool.drop("first.txt", [1])
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 30), daemon.readErr())

        // Moved away and made again.
        XCTAssertEqual(rename(spool.incoming, spool.path + "/incoming.old"), 0)
        XCTAssertEqual(mkdir(spool.incoming, 0o755), 0)
        try spool.drop("second.txt", [2])
        XCTAssertTrue(receiver.waitForRequests(count: 2, timeout: 30), daemon.readErr())

        // Removed, and another folder (already holding a complete, old file) moved in.
        let fresh = spool.root + "/fresh"
        XCTAssertEqual(mkdir(fresh, 0o755), 0)
        try Data([3]).write(to: URL(fileURLWithPath: fresh + "/third.txt"))
        var times = [timespec(tv_sec: time(nil) - 60, tv_nsec: 0), timespec(tv_sec: time(nil) - 60, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, fresh + "/third.txt", &times, 0), 0)
        try FileManager.default.removeItem(atPath: spool.incoming)
        XCTAssertEqual(rename(fresh, spool.incoming), 0)
        try spool.drop("fourth.txt", [4])
        XCTAssertTrue(receiver.waitForRequests(count: 4, timeout: 30), daemon.readErr())

        XCTAssertEqual(Set(receiver.requests.map(\.target)), ["/up/first.txt", "/up/second.txt", "/up/third.txt", "/up/fourth.txt"])
        XCTAssertTrue(daemon.readErr().contains("incoming/ was replaced"), daemon.readErr())
        daemon.signal(SIGTERM)
        XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0)
    }
}

/// A name in incoming/ that is not valid UTF-8 (a Latin-1 producer) is taken like any other.
final class IncomingOddNameTests: XCTestCase {
    func testDrain_nameNotValidUTF8_isTaken_bytesKeptInTheJSONAndTheURL() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        try FileManager.default.createDirectory(atPath: spool.incoming + "/cam", withIntermediateDirectories: true)
        let name: [UInt8] = Array("cam/caf".utf8) + [0xE9] + Array(".txt".utf8)
        let path = Array((spool.incoming + "/").utf8) + name
        let fd = (path.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
            open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(write(fd, [UInt8]([1, 2, 3]), 3), 3)
        XCTAssertEqual(close(fd), 0)

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--keep-done", "--settle", "0"])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.map(\.target), ["/up/cam/caf%E9.txt"], "the name's own bytes, percent-encoded")
        XCTAssertEqual(receiver.requests.first?.body, [1, 2, 3])
        let json = try XCTUnwrap(spool.files(in: "done").first { $0.hasSuffix(".json") })
        XCTAssertTrue(json.hasSuffix("-caf_xE9.txt.a1.json"), json)
        let metadata = try spool.json("done/" + json)
        XCTAssertEqual(metadata["originalName"] as? String, "cam/caf\\xE9.txt")
        XCTAssertEqual((metadata["originalNameBytes"] as? String).flatMap { Data(base64Encoded: $0) }, Data(name))
        XCTAssertEqual(spool.files(in: "incoming/cam"), [])
    }
}

extension IncomingFolderTests {
    /// The inotify watches a daemon holds (`/proc/PID/fdinfo` of its inotify descriptors).
    static func inotifyWatches(of pid: pid_t) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.reduce(0) { count, fd in
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == "anon_inode:inotify",
                  let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8)
            else { return count }
            return count + info.split(separator: "\n").filter { $0.hasPrefix("inotify ") }.count
        }
    }

    /// One watch per subfolder, uncapped, took 3,035 watches from the user's shared budget for
    /// 3,000 folders. `--max-watches` caps them (incoming/ included; the spool root and pending/
    /// are two more), says so once, and files in folders past it are still taken by scans.
    func testRun_moreFoldersThanMaxWatches_capsTheWatches_saysSoOnce_filesStillTaken() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        for i in 0..<40 { try place(spool, "d\(i)/f.txt", [UInt8(i)]) }
        let daemon = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", receiver.baseURL + "/in/", "--settle", "0", "--max-watches", "10"])
        addTeardownBlock { daemon.signal(SIGKILL) }

        XCTAssertTrue(receiver.waitForRequests(count: 40, timeout: 30), daemon.readErr())
        XCTAssertEqual(IncomingFolderTests.inotifyWatches(of: daemon.process.processIdentifier), 12)
        // A file in a watched folder is still announced at once.
        try spool.drop("late.txt", [1])
        XCTAssertTrue(receiver.waitForRequests(count: 41, timeout: 30), daemon.readErr())
        daemon.signal(SIGTERM)
        let result = try daemon.wait(timeout: 30)
        XCTAssertEqual(result.exitCode, 0)
        XCTAssertEqual(result.stderr.occurrences(of: "more folders than --max-watches 10"), 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("found by the rescan every 60 s"), result.stderr)
    }
}
