import Foundation
import Synchronization
import UploadReceiver
import XCTest

/// `--recycle-after N`: the daemon re-executes itself after N requests (same pid), holding the
/// spool lock throughout, losing no item, sending none twice, and still stopping on SIGTERM.
final class RecycleTests: XCTestCase {
    func testRun_recyclesEveryNRequests_samePid_lockNeverLapses_eachItemUploadedOnce() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        let names = (0..<100).map { String(format: "item-%03d.bin", $0) }
        for (n, name) in names.prefix(50).enumerated() { try spool.drop(name, payload(64, seed: UInt64(n))) }
        let daemon = try SpooldProcess([
            "run", "--spool", spool.path, "--url", receiver.baseURL + "/in/", "--recycle-after", "20", "--settle", "0",
        ])
        addTeardownBlock { daemon.signal(SIGKILL) }
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 30), daemon.readErr())

        // From here until the SIGTERM, nobody else may take the lock, not for a moment: one
        // thread tries flock(2) in a tight loop, another starts real `spoold run`s.
        let probing = Atomic<Bool>(true)
        let lapses = Atomic<Int>(0)
        let probes = Atomic<Int>(0)
        let prober = Thread {
            // Signals stay with the other threads (Foundation's Process waits for SIGCHLD).
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            let fd = open(spool.path + "/spoold.lock", O_RDONLY | O_CLOEXEC)
            defer { close(fd) }
            while probing.load(ordering: .relaxed) {
                if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                    lapses.add(1, ordering: .relaxed)
                    flock(fd, LOCK_UN)
                }
                probes.add(1, ordering: .relaxed)
            }
        }
        prober.start()
        var secondRuns: [Int32] = []
        for (n, name) in names.suffix(50).enumerated() {
            try spool.drop(name, payload(64, seed: UInt64(50 + n)))
            if n % 10 == 0 {
                let second = try SpooldProcess.run(["run", "--spool", spool.path, "--url", receiver.baseURL + "/"], timeout: 30)
                secondRuns.append(second.exitCode)
            }
        }
        XCTAssertTrue(receiver.waitForRequests(count: 100, timeout: 60), daemon.readErr())
        probing.store(false, ordering: .relaxed)
        while !prober.isFinished { usleep(1000) }

        daemon.signal(SIGTERM)
        let result = try daemon.wait(timeout: 30)
        XCTAssertNil(result.signal, result.stderr)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(lapses.load(ordering: .relaxed), 0, "the lock was free \(lapses.load(ordering: .relaxed)) times in \(probes.load(ordering: .relaxed)) tries")
        XCTAssertGreaterThan(probes.load(ordering: .relaxed), 100)
        XCTAssertEqual(secondRuns, [Int32](repeating: 4, count: 5), "a second spoold during the recycles must exit 4")

        let recycles = result.stderr.split(separator: "\n").filter { $0.contains("recycling after") }
        XCTAssertGreaterThanOrEqual(recycles.count, 4, result.stderr)
        XCTAssertTrue(recycles.allSatisfy { $0.contains("RSS ") && $0.contains(" MiB") }, "\(recycles)")
        let pid = daemon.process.processIdentifier
        let again = result.stderr.split(separator: "\n").filter { $0.contains("running again after recycle") }
        XCTAssertEqual(again.count, recycles.count, result.stderr)
        XCTAssertTrue(again.allSatisfy { $0.contains("(pid \(pid))") }, "\(again)")

        // Every item exactly once: uploads in flight finish before each exec.
        let targets = receiver.requests.map(\.target)
        XCTAssertEqual(targets.sorted(), names.map { "/in/" + $0 })
        XCTAssertEqual(spool.itemFiles, [])
        XCTAssertEqual(spool.files(in: "incoming"), [])
    }

    func testRun_SIGTERMRightAtARecycle_stopsCleanly_andNothingIsLost() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        var names: [String] = []
        for round in 0..<4 {
            for n in 0..<15 {
                let name = "r\(round)-\(n).bin"
                names.append(name)
                try spool.drop(name, payload(32, seed: UInt64(round * 100 + n)))
            }
            let daemon = try SpooldProcess([
                "run", "--spool", spool.path, "--url", receiver.baseURL + "/in/", "--recycle-after", "3", "--settle", "0",
            ])
            addTeardownBlock { daemon.signal(SIGKILL) }
            // The signal goes out the moment the recycle is logged: it lands between the log
            // line and execve, or while the new image starts. Either way it must stop the daemon.
            let deadline = Date().addingTimeInterval(30)
            while !daemon.readErr().contains("recycling after"), Date() < deadline { usleep(200) }
            daemon.signal(SIGTERM)
            let result = try daemon.wait(timeout: 30)
            XCTAssertNil(result.signal, "round \(round): killed by signal \(result.signal ?? 0):\n\(result.stderr)")
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertTrue(result.stderr.contains("recycling after"), result.stderr)
            XCTAssertTrue(result.stderr.contains("spoold info: stopped: "), result.stderr)
        }
        let drain = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", receiver.baseURL + "/in/", "--settle", "0"])
        XCTAssertEqual(drain.exitCode, 0, drain.stderr)
        XCTAssertEqual(Set(receiver.requests.map(\.target)), Set(names.map { "/in/" + $0 }))
        XCTAssertEqual(receiver.requests.count, names.count, "uploads in flight finish before a stop or a recycle")
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testDrain_recycles_andItsExitCodeAndSummaryCoverTheWholeRun() throws {
        let receiver = UploadReceiver(script: ResponseScript { request in
            .status(request.target.contains("bad") ? 400 : 201)
        })
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        // Taken first (names are ingested in order): its failure is in the first image.
        try spool.drop("a-bad.bin", [1, 2, 3])
        for n in 0..<39 { try spool.drop(String(format: "b-%02d.bin", n), payload(40, seed: UInt64(n))) }
        let result = try SpooldProcess.run([
            "drain", "--spool", spool.path, "--url", receiver.baseURL + "/in/", "--recycle-after", "10", "--settle", "0",
        ], timeout: 60)
        XCTAssertNil(result.signal, result.stderr)
        XCTAssertEqual(result.exitCode, 1, "the failure before the first recycle still counts:\n\(result.stderr)")
        XCTAssertGreaterThanOrEqual(result.stderr.components(separatedBy: "recycling after").count - 1, 3, result.stderr)
        XCTAssertTrue(
            result.stderr.contains("drain finished: 40 ingested, 39 uploaded, 1 moved to failed/"), result.stderr)
        XCTAssertEqual(receiver.requests.count, 40)
        XCTAssertEqual(spool.files(in: "failed").count, 2)
    }
}
