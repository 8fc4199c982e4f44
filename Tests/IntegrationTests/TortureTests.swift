import Foundation
import UploadReceiver
import SpoolTestSupport
import XCTest

/// kill -9 at random moments while the daemon works, many times, then drain: nothing is lost, the spool ends empty, duplicates are bounded by what
/// was in flight; a daemon killed on every try of an item still gives up (after --max-interrupted
/// tries), and kills do not use up an innocent item's --max-attempts.
final class TortureTests: XCTestCase {
    func testKill9_manyTimesWhileUploading_thenDrain_losesNothingAndDuplicatesOnlyWhatWasInFlight() throws {
        let seed = ProcessInfo.processInfo.environment["SPOOLD_TORTURE_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("TortureTests seed: \(seed) (rerun with SPOOLD_TORTURE_SEED=\(seed))")
        var random = SeededRandom(state: seed)
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        let concurrency = 4
        let kills = 14
        let enqueuedCount = 1_000
        let droppedPerRun = 5

        // 1,000 items in one enqueue call (one commit).
        let sourceDir = spool.root + "/src"
        try FileManager.default.createDirectory(atPath: sourceDir, withIntermediateDirectories: true)
        var expectedBodies = Set<[UInt8]>()
        var sources: [String] = []
        for i in 0..<enqueuedCount {
            let bytes = payload(24, seed: UInt64(i) &+ seed &* 31)
            let path = "\(sourceDir)/f\(i).bin"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            sources.append(path)
            expectedBodies.insert(bytes)
        }
        let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool.path] + sources)
        XCTAssertEqual(enqueued.exitCode, 0, enqueued.stderr)
        let ids = Set(enqueued.lines)
        XCTAssertEqual(ids.count, enqueuedCount)

        // Items must end uploaded, never in failed/: a kill counts an attempt for each item in
        // flight, and with random kills one item may be caught three times, so this test allows
        // 100 attempts. That attempts stay bounded under repeated kills is proven separately below.
        let options = [
            "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--concurrency", "\(concurrency)",
            "--max-attempts", "100", "--retry-base", "0.01", "--max-backoff", "0.2", "--settle", "0",
        ]
        var dropped = 0
        for round in 0..<kills {
            let daemon = try SpooldProcess(["run"] + options)
            for _ in 0..<droppedPerRun {
                let bytes = payload(40, seed: seed &+ 1_000_000 &+ UInt64(dropped))
                try spool.drop("dropped-\(dropped).bin", bytes)
                expectedBodies.insert(bytes)
                dropped += 1
            }
            // The moment: after a random number of requests (mid-upload), or after a random delay
            // (which may fall in start-up recovery, ingest or a commit).
            // Wait only for requests that can still come: near the end few items may be left, and
            // a target beyond them would wait for nothing.
            let accepted = Set(receiver.requests.filter { $0.answeredStatus == 201 }.compactMap { $0.header("Idempotency-Key") })
            let remaining = enqueuedCount + dropped - accepted.count
            if round % 3 == 2 || remaining < 60 {
                usleep(UInt32(random.int(in: 20...300)) * 1000)
            } else {
                let target = receiver.handledRequestCount + random.int(in: 5...50)
                XCTAssertTrue(receiver.waitForRequests(count: target, timeout: 30), "round \(round): the daemon stalled (seed \(seed))")
            }
            daemon.signal(SIGKILL)
            let result = try daemon.wait(timeout: 30)
            XCTAssertEqual(result.signal, SIGKILL, "round \(round): \(result.stderr)")
        }

        let drained = try SpooldProcess.run(["drain"] + options, timeout: 120)
        XCTAssertEqual(drained.exitCode, 0, "seed \(seed): \(drained.stderr.suffix(2000))")

        let requests = receiver.requests
        let accepted = requests.filter { $0.answeredStatus == 201 && $0.bodyComplete }
        let acceptedKeys = Set(accepted.compactMap { $0.header("Idempotency-Key") })
        XCTAssertEqual(ids.subtracting(acceptedKeys), [], "seed \(seed): enqueued items never uploaded")
        let acceptedBodies = Set(accepted.map(\.body))
        XCTAssertEqual(expectedBodies.subtracting(acceptedBodies).count, 0, "seed \(seed): items lost")
        XCTAssertEqual(acceptedKeys.count, enqueuedCount + dropped, "seed \(seed): one key per item")
        for folder in ["pending", "inflight", "tmp", "failed", "incoming"] {
            XCTAssertEqual(spool.files(in: folder), [], "seed \(seed): \(folder)/ is empty")
        }
        let distinct = Set(requests.compactMap { $0.header("Idempotency-Key") }).count
        let duplicates = requests.count - distinct
        print("TortureTests: \(kills) kills, \(requests.count) requests for \(distinct) items, \(duplicates) duplicates")
        XCTAssertLessThanOrEqual(duplicates, kills * concurrency, "seed \(seed): more duplicates than were in flight")
        let check = try SpooldProcess.run(["check", "--spool", spool.path])
        XCTAssertEqual(check.exitCode, 0, check.stdout)
    }

    /// The attempt is counted on disk before the request goes out, so a daemon
    /// that dies during every try (here the receiver SIGKILLs it when the request arrives) still
    /// gives up after three.
    /// An item that kills spoold on every try still ends in failed/: each start counts the attempt
    /// (`.aN`) before the request, and recovery parks the item once --max-interrupted (default 10)
    /// interrupted attempts are used up. N counts every attempt started, so it is `.a10`.
    func testKilledOnEveryTry_givesUpAfterTheInterruptedBudget() throws {
        let spool = try TestSpool(self)
        let lockPath = spool.path + "/spoold.lock"
        let receiver = UploadReceiver(script: ResponseScript { _ in
            Self.killDaemon(lockPath: lockPath)
            return .faulted(.neverAnswer)
        })
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        try spool.drop("doomed.bin", payload(64, seed: 42))
        let options = ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "0.01", "--settle", "0"]

        var killed = 0
        var last: SpooldProcess.Result?
        for _ in 0..<14 {
            let result = try SpooldProcess.run(options, timeout: 30)
            if result.signal == SIGKILL { killed += 1; continue }
            last = result
            break
        }

        XCTAssertEqual(killed, 10, "killed on each of the ten attempts --max-interrupted allows")
        XCTAssertEqual(last?.exitCode, 1, "the eleventh start parks the item and exits 1: \(last?.stderr ?? "")")
        XCTAssertEqual(receiver.requests.count, 10)
        XCTAssertEqual(Set(receiver.requests.compactMap { $0.header("Idempotency-Key") }).count, 1)
        let failed = spool.files(in: "failed")
        XCTAssertEqual(failed.count, 2)
        XCTAssertTrue(failed.allSatisfy { $0.contains(".a10.") }, "\(failed)")
        let json = try spool.json("failed/" + (failed.first { $0.hasSuffix(".json") } ?? ""))
        XCTAssertEqual(json["failureReason"] as? String, "interrupted on attempt 10: spoold stopped mid-upload 10 times (at most 10)")
        let attempts = json["attempts"] as? [[String: Any]] ?? []
        XCTAssertEqual(attempts.map { $0["outcome"] as? String }, Array(repeating: "interrupted", count: 10))
        XCTAssertEqual(spool.itemFiles.filter { !$0.hasPrefix("failed/") }, [])
    }

    /// The other side: kills while a slow receiver holds an item do not use up its --max-attempts.
    /// Answered 500, killed, 500, killed three times (once on what was its last answered attempt),
    /// then 201: uploaded as `.a7`, not dead-lettered.
    func testKilledFourTimesWhileTheReceiverHoldsTheItem_theItemIsStillUploaded() throws {
        let spool = try TestSpool(self)
        let lockPath = spool.path + "/spoold.lock"
        let killAt: Set<Int> = [1, 3, 4, 5]
        let receiver = UploadReceiver(script: ResponseScript { request in
            if killAt.contains(request.index) {
                Self.killDaemon(lockPath: lockPath)
                return .faulted(.neverAnswer)
            }
            return request.index < 3 ? .status(500) : .status(201)
        })
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let bytes = payload(64, seed: 7)
        try spool.drop("innocent.bin", bytes)
        let options = [
            "drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "0.01", "--settle", "0",
            "--max-attempts", "3", "--keep-done",
        ]

        var killed = 0
        var last: SpooldProcess.Result?
        for _ in 0..<8 {
            let result = try SpooldProcess.run(options, timeout: 30)
            if result.signal == SIGKILL { killed += 1; continue }
            last = result
            break
        }

        XCTAssertEqual(killed, 4)
        XCTAssertEqual(last?.exitCode, 0, "uploaded: \(last?.stderr ?? "")")
        XCTAssertEqual(receiver.requests.count, 7)
        XCTAssertEqual(Set(receiver.requests.compactMap { $0.header("Idempotency-Key") }).count, 1)
        XCTAssertTrue(receiver.requests.contains { $0.answeredStatus == 201 && $0.bodyComplete && $0.body == bytes })
        XCTAssertEqual(spool.files(in: "failed"), [])
        let done = spool.files(in: "done")
        XCTAssertTrue(done.count == 2 && done.allSatisfy { $0.contains(".a7.") }, "N counts every attempt started: \(done)")
        let json = try spool.json("done/" + (done.first { $0.hasSuffix(".json") } ?? ""))
        let attempts = json["attempts"] as? [[String: Any]] ?? []
        XCTAssertEqual(
            attempts.map { $0["outcome"] as? String },
            ["retryable", "interrupted", "retryable", "interrupted", "interrupted", "interrupted", "success"])
        XCTAssertEqual(spool.itemFiles.filter { !$0.hasPrefix("done/") }, [])
    }

    /// The daemon writes its pid into the lock before it works, so a script knows whom to kill.
    private static func killDaemon(lockPath: String) {
        let text = (try? String(contentsOfFile: lockPath, encoding: .utf8)) ?? ""
        if let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) { kill(pid, SIGKILL) }
    }
}
