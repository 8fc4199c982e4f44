import Foundation
import Glibc
import UploadReceiver
import XCTest

/// A week offline: the built daemon on a spool of 100,000 queued items. They go out oldest first
/// from the start, memory stays within its bound, and `status` answers from the daemon's counts
/// with the whole queue. (How fast: `scripts/bench --backlog`, not here.)
final class BacklogAtSizeTests: XCTestCase {
    /// `spoold-bench fill`, built beside `spoold`: items written straight into pending/, as
    /// `spoold enqueue --move` leaves them, far faster.
    private func fill(_ spool: TestSpool, count: Int) throws {
        let bench = Bundle.main.bundleURL.appendingPathComponent("spoold-bench").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bench)
        process.arguments = ["fill", "--count", "\(count)", spool.path]
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

    func testAHundredThousandQueued_goOutOldestFirst_inBoundedMemory_andStatusCountsThemAll() throws {
        let count = 100_000
        let spool = try TestSpool(self)
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
        let taken = daemon.readErr().split(separator: "\n").compactMap { line -> Int? in
            guard let at = line.range(of: "spoold debug: uploading "), let dat = line.range(of: ".dat (attempt 1") else { return nil }
            return Int(line[at.upperBound..<dat.lowerBound].split(separator: "-").last?.dropFirst() ?? "")
        }
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
