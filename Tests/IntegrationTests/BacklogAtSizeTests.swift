import Foundation
import Glibc
import SpoolTestSupport
import UploadReceiver
import XCTest

/// A week offline: the built daemon on a spool of 100,000 queued items. They go out oldest first
/// from the start, memory stays within its bound, and `status` answers from the daemon's counts
/// with the whole queue. (How fast: `scripts/bench --backlog`, not here.)
final class BacklogAtSizeTests: XCTestCase {
    /// `spoold-bench fill`, built beside `spoold`: items written straight into pending/, as
    /// `spoold enqueue --move` leaves them, far faster.
    private func fill(_ spool: TestSpool, count: Int, at path: String? = nil, startMilliseconds: Int64? = nil) throws {
        let bench = Bundle.main.bundleURL.appendingPathComponent("spoold-bench").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bench)
        process.arguments = ["fill", "--count", "\(count)", path ?? spool.path] + (startMilliseconds.map { ["--start-ms", "\($0)"] } ?? [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(bench) fill")
    }

    /// VmHWM of a process, in KiB.
    private func peakResidentKiB(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
    }

    /// The items the daemon took, by their number (f<n>.dat), in the order its log says it took them.
    private func takenNumbers(_ log: String) -> [Int] {
        log.split(separator: "\n").compactMap { line -> Int? in
            guard let at = line.range(of: "spoold debug: uploading "), let dat = line.range(of: ".dat (attempt 1") else { return nil }
            return Int(line[at.upperBound..<dat.lowerBound].split(separator: "-").last?.dropFirst() ?? "")
        }
    }

    /// A drain of a backlog beyond memory that recycles (re-executes itself) on the way: each
    /// new image takes the whole line the last one handed on (its items in memory, and the runs
    /// of the first image's pass, open, read on from where it was), so only the first image lists
    /// pending/, and the whole backlog still goes out in line, each item once.
    func testADrainThatRecycles_keepsTheLine_eachNewImageReadingOnTheRunsHandedOn() throws {
        let count = 2_000
        let spool = try TestSpool(self)
        try fill(spool, count: count)
        let receiver = UploadReceiver(script: .always(201), keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let result = try SpooldProcess.run([
            "drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--verbose",
            "--queue-memory", "400", "--recycle-after", "500",
        ], timeout: 120)
        XCTAssertEqual(result.exitCode, 0, String(result.stderr.suffix(2000)))
        let lines = result.stderr.split(separator: "\n")
        let recycles = lines.filter { $0.contains("draining again after recycle") }.count
        XCTAssertGreaterThanOrEqual(recycles, 3, String(result.stderr.suffix(2000)))
        let handed = lines.filter { $0.contains("took the last image's whole line: ") }
        XCTAssertEqual(handed.count, recycles, String(result.stderr.suffix(2000)))
        // The first three recycles come with items beyond memory: in the first image's run(s).
        XCTAssertEqual(handed.prefix(3).filter { $0.contains(" item(s) in memory") && !$0.contains(" in 0 run(s)") }.count, 3, "\(handed)")
        XCTAssertEqual(lines.filter { $0.contains("spoold debug: read pending/: ") }.count, 1, "one pass, the first image's")
        XCTAssertEqual(takenNumbers(result.stderr), Array(0..<count), "in line order across the images")
        XCTAssertEqual(receiver.requests.count, count, "each item once")
        XCTAssertEqual(spool.itemFiles, [])
    }

    /// An item an operator moves into pending/ in the instant of a recycle (here a hook of the
    /// last upload before it, run while the image winds down or once it stopped reading events)
    /// is adopted by the next image from the inotify instance handed on, and goes out in line:
    /// it is older than everything queued, so among the next image's first uploads, not after
    /// the whole backlog (no pass is made that would find it).
    func testAnItemMovedIntoPendingAtTheInstantOfARecycle_isAdoptedByTheNextImage_inLine() throws {
        let count = 300
        let spool = try TestSpool(self)
        try fill(spool, count: count)
        // One item older than all, made in a spool of its own and kept aside until the recycle.
        let other = spool.root + "/other"
        try fill(spool, count: 1, at: other, startMilliseconds: Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000)
        let aside = spool.root + "/aside"
        try FileManager.default.moveItem(atPath: other + "/pending", toPath: aside)
        let early = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: aside).first { $0.hasSuffix(".json") })
        let earlyID = String(early.prefix { $0 != "." })
        let receiver = UploadReceiver(script: .always(201), keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let move = "if [ \"$SPOOLD_NAME\" = f99.dat ]; then sleep 0.3; mv '\(aside)'/*.blob '\(spool.path)/pending/'; mv '\(aside)'/*.json '\(spool.path)/pending/'; fi"
        let result = try SpooldProcess.run([
            "drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--verbose", "--concurrency", "1",
            "--queue-memory", "100", "--recycle-after", "100", "--recycle-above", "0", "--on-success", move,
        ], timeout: 120)
        XCTAssertEqual(result.exitCode, 0, String(result.stderr.suffix(2000)))
        let lines = result.stderr.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.contains("took the last image's whole line: ") }, String(result.stderr.suffix(2000)))
        let taken = lines.filter { $0.contains("spoold debug: uploading ") }
        let at = try XCTUnwrap(taken.firstIndex { $0.contains(earlyID) }, "uploaded")
        XCTAssertGreaterThanOrEqual(at, 100, "after the first image's 100")
        XCTAssertLessThan(at, 110, "among the next image's first uploads: \(taken[100..<min(taken.count, 112)])")
        XCTAssertEqual(receiver.requests.count, count + 1, "each item once")
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testAHundredThousandQueued_goOutOldestFirst_inBoundedMemory_andStatusCountsThemAll() throws {
        let count = 100_000
        // 200,000 files of a 4 KiB block each: on a tmpfs when there is one with room (the
        // daemon's order, memory and counts do not depend on the file system; writing and
        // removing them on a disk was most of this test's time), else in the temporary folder.
        let spool = try TestSpool(self, in: TemporarySpool.memoryFolder(withRoomFor: 2 << 30))
        try fill(spool, count: count)  // f0.dat ... f99999.dat, one millisecond apart, oldest first
        let receiver = UploadReceiver(script: .always(201), keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--verbose"])
        addTeardownBlock { daemon.signal(SIGKILL) }

        let window = 2_000
        XCTAssertTrue(receiver.waitForRequests(count: window, timeout: 120), daemon.readErr())
        let status = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        XCTAssertEqual(status.exitCode, 0, status.stderr)
        let peak = try XCTUnwrap(peakResidentKiB(daemon.process.processIdentifier))
        daemon.signal(SIGTERM)
        XCTAssertEqual(try daemon.wait(timeout: 60).exitCode, 0)

        // Oldest first: the daemon took f0.dat, f1.dat, ... in that order (its log says which it
        // sends as it takes each; the receiver sees them as 4 connections deliver them).
        let taken = takenNumbers(daemon.readErr())
        XCTAssertGreaterThanOrEqual(taken.count, window, String(daemon.readErr().suffix(2000)))
        XCTAssertEqual(taken, Array(0..<taken.count), "in line order")

        // status while it ran: the daemon's counts, every item (a few uploaded meanwhile).
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((object["counts"] as? [String: Any])?["from"] as? String, "daemon", status.stdout)
        let queued = try XCTUnwrap((object["queue"] as? [String: Any])?["items"] as? Int)
        XCTAssertLessThanOrEqual(queued, count)
        XCTAssertGreaterThan(queued, count / 2, "the queue beyond memory is counted")

        // Memory bounded by --queue-memory (10,000), not by the 100,000 queued.
        XCTAssertLessThan(peak, 64 * 1024, "peak RSS \(peak) KiB")
    }
}
