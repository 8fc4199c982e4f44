import Foundation
import SpoolStore
import UploadReceiver
import XCTest

/// Crash points (`SPOOLD_CRASH_AT`): every transition is cut at every step by a SIGKILL the binary
/// sends itself; then recovery runs (and is itself cut at a recovery point when it has work to do),
/// runs again, and the spool must be consistent: every item uploaded or in failed/ with a reason,
/// nothing left in pending/, inflight/ or tmp/, no upload after a recorded success, attempts bounded
/// (--max-attempts answered ones, plus one the crash interrupted),
/// and `spoold check` clean.
final class CrashTests: XCTestCase {
    /// The transitions a crash can cut, each set up the way it happens in real use.
    enum Scenario: String, CaseIterable {
        /// The daemon takes files from incoming/ as items first (`--no-direct`, `Spool.add`).
        case ingest
        /// The daemon sends files straight from incoming/ (its default); a 500 then makes each an
        /// item (the first commit).
        case direct
        /// `spoold enqueue --move` (`Spool.add` from the command line).
        case enqueue
        /// The daemon claims pending items (the first commit of a drain).
        case claim
        /// A 500 sends each item back to pending/ (the second commit).
        case requeue
        /// With --max-attempts 1 a 500 parks each item in failed/ (the second commit).
        case fail
        /// A 201: the items are removed (the second commit).
        case done
        /// A 201 with --keep-done: the items move to done/.
        case doneKept
        /// `spoold retry --all` brings failed items back.
        case retry
        /// Index compaction at every daemon start.
        case start
        /// Recovery itself, with a claim cut after its record (split pairs, interrupted uploads).
        case recovery
    }

    /// Every (scenario, point, n-th arrival) the tests cut. The counts pick the transition: a drain
    /// of three pending items claims all three in its first commit, so the second commit (and the
    /// fourth blob or json rename) belongs to the first recorded outcome.
    static let table: [(Scenario, CrashPoint, Int)] = [
        (.ingest, .addAfterStage, 1), (.ingest, .addAfterIndex, 1), (.ingest, .addAfterBlobRename, 2),
        (.ingest, .addAfterJSONRename, 2), (.ingest, .addAfterFolderSync, 1),
        (.direct, .directAfterTake, 2), (.direct, .commitAfterStage, 1), (.direct, .commitAfterIndex, 1),
        (.direct, .commitAfterBlobRename, 1), (.direct, .commitAfterJSONRename, 1), (.direct, .commitAfterFolderSync, 1),
        (.enqueue, .addAfterStage, 1), (.enqueue, .addAfterIndex, 1), (.enqueue, .addAfterBlobRename, 2),
        (.enqueue, .addAfterJSONRename, 2), (.enqueue, .addAfterFolderSync, 1),
        (.claim, .commitAfterStage, 1), (.claim, .commitAfterIndex, 1), (.claim, .commitAfterBlobRename, 2),
        (.claim, .commitAfterJSONRename, 2), (.claim, .commitAfterFolderSync, 1),
        (.requeue, .commitAfterStage, 2), (.requeue, .commitAfterIndex, 2), (.requeue, .commitAfterBlobRename, 4),
        (.requeue, .commitAfterJSONRename, 4), (.requeue, .commitAfterFolderSync, 2),
        (.fail, .commitAfterStage, 2), (.fail, .commitAfterIndex, 2), (.fail, .commitAfterBlobRename, 4),
        (.fail, .commitAfterJSONRename, 4), (.fail, .commitAfterFolderSync, 2),
        (.done, .commitAfterStage, 2), (.done, .commitAfterIndex, 2), (.done, .commitAfterJSONRename, 4),
        (.done, .commitAfterFolderSync, 2),
        (.doneKept, .commitAfterIndex, 2), (.doneKept, .commitAfterBlobRename, 4), (.doneKept, .commitAfterJSONRename, 4),
        (.retry, .commitAfterStage, 1), (.retry, .commitAfterIndex, 1), (.retry, .commitAfterBlobRename, 2),
        (.retry, .commitAfterJSONRename, 2), (.retry, .commitAfterFolderSync, 1),
        (.start, .compactAfterWrite, 1), (.start, .compactAfterRename, 1),
        (.recovery, .recoveryAfterRepair, 1), (.recovery, .recoveryAfterRepair, 3), (.recovery, .recoveryAfterRequeue, 1),
    ]

    static let itemCount = 3

    func testTable_coversEveryCrashPointAndEveryScenario() {
        XCTAssertEqual(
            Set(Self.table.map(\.1)).union(S3ResumeTests.crashPoints).union(TusTests.crashPoints), Set(CrashPoint.allCases), "a crash point no test cuts at")
        XCTAssertEqual(Set(Self.table.map(\.0)), Set(Scenario.allCases))
    }

    func testCrash_duringIngest_recoversEveryFile() throws { try run(.ingest) }
    func testCrash_duringDirectUpload_recoversEveryFile_withItsName() throws { try run(.direct) }
    func testCrash_duringEnqueueMove_losesNoFile() throws { try run(.enqueue) }
    func testCrash_duringClaim_countsTheAttemptAndUploads() throws { try run(.claim) }
    func testCrash_duringRequeueAfter500_retriesAndUploads() throws { try run(.requeue) }
    func testCrash_duringFailAfterLastAttempt_parksWithReason() throws { try run(.fail) }
    func testCrash_duringDone_neverUploadsARecordedSuccessAgain() throws { try run(.done) }
    func testCrash_duringDoneWithKeepDone_neverUploadsARecordedSuccessAgain() throws { try run(.doneKept) }
    func testCrash_duringRetryCommand_itemsUploadedOrStillFailedWithReason() throws { try run(.retry) }
    func testCrash_duringIndexCompactionAtStart_uploadsEverything() throws { try run(.start) }
    func testCrash_duringRecovery_isJustAnotherCrash() throws { try run(.recovery) }

    // MARK: The procedure

    private func run(_ scenario: Scenario) throws {
        for (s, point, count) in Self.table where s == scenario {
            try cut(scenario, at: point, count: count)
        }
    }

    private func cut(_ scenario: Scenario, at point: CrashPoint, count: Int) throws {
        let label = "\(scenario) at \(point.rawValue):\(count)"
        let spool = try TestSpool(self)
        let finalScript: ResponseScript = switch scenario {
        case .fail: .always(500)
        case .requeue, .direct: .perKey([.status(500)], then: .status(201))
        default: .always(201)
        }
        let receiver = UploadReceiver(script: scenario == .retry ? .always(500) : finalScript)
        try receiver.start()
        defer { receiver.stop() }
        var options = ["--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "0.02", "--settle", "0"]
        switch scenario {
        case .ingest: options += ["--no-direct"]
        case .fail: options += ["--max-attempts", "1"]
        case .doneKept: options += ["--keep-done"]
        default: break
        }
        let maximumAttempts = scenario == .fail ? 1 : 3

        // Set up: the items, each with distinct contents so they can be told apart anywhere.
        let payloads = (0..<Self.itemCount).map { payload(100 + $0, seed: UInt64($0) + 1) }
        let sources = (0..<Self.itemCount).map { spool.root + "/src-\($0).bin" }
        switch scenario {
        case .ingest, .direct:
            // In a subfolder: a name the id's hint cannot stand in for after a recovery.
            try FileManager.default.createDirectory(atPath: spool.incoming + "/cam", withIntermediateDirectories: true)
            for (i, bytes) in payloads.enumerated() { try spool.drop("cam/file-\(i).bin", bytes) }
        default:
            for (path, bytes) in zip(sources, payloads) { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
            if scenario != .enqueue {
                let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool.path] + sources)
                XCTAssertEqual(enqueued.exitCode, 0, "\(label): \(enqueued.stderr)")
            }
        }
        if scenario == .retry {
            let parked = try SpooldProcess.run(["drain", "--max-attempts", "1"] + options)
            XCTAssertEqual(parked.exitCode, 1, "\(label): the set-up parks every item in failed/: \(parked.stderr)")
            receiver.setScript(finalScript)
        }
        if scenario == .recovery {
            let cut = try SpooldProcess.run(["drain"] + options, environment: ["SPOOLD_CRASH_AT": "commit.after-blob-rename:2"])
            XCTAssertEqual(cut.signal, SIGKILL, "\(label): the set-up crash")
            // Leftovers of an add cut before its index record (staging orphans), so recovery has
            // several repairs to be cut between: these two removals, then the split pair.
            for name in ["20000101T000000000Z-0000-00000000-orphan.a0.json", "20000101T000000000Z-0001-00000000-orphan.a0.blob"] {
                try Data("orphan".utf8).write(to: URL(fileURLWithPath: spool.path + "/tmp/" + name))
            }
        }

        // The crash.
        let crashArguments: [String] = switch scenario {
        case .enqueue: ["enqueue", "--move", "--spool", spool.path] + sources
        case .retry: ["retry", "--all", "--spool", spool.path]
        default: ["drain"] + options
        }
        let crashed = try SpooldProcess.run(crashArguments, environment: ["SPOOLD_CRASH_AT": "\(point.rawValue):\(count)"], timeout: 30)
        XCTAssertEqual(crashed.signal, SIGKILL, "\(label): spoold must die at the crash point (exit \(crashed.exitCode)): \(crashed.stderr)")
        if scenario == .enqueue { XCTAssertEqual(crashed.stdout, "", "\(label): nothing is acknowledged before the commit ends") }

        // What was settled at the crash: successes recorded in the index must never be sent again.
        let recordedDone = doneRecords(in: spool)
        let requestsAtCrash = requestCounts(receiver)

        // Recovery, itself cut at its first repair if it has one, then again, then a check.
        let interrupted = try SpooldProcess.run(["drain"] + options, environment: ["SPOOLD_CRASH_AT": "recovery.after-repair"], timeout: 30)
        XCTAssertTrue(interrupted.signal == SIGKILL || [0, 1].contains(interrupted.exitCode), "\(label): \(interrupted.stderr)")
        let drained = try SpooldProcess.run(["drain"] + options, timeout: 30)
        XCTAssertNil(drained.signal, label)
        XCTAssertTrue([0, 1].contains(drained.exitCode), "\(label): \(drained.stderr)")
        let check = try SpooldProcess.run(["check", "--spool", spool.path])
        XCTAssertEqual(check.exitCode, 0, "\(label): spoold check after recovery:\n\(check.stdout)\(check.stderr)")

        // Consistent: nothing half-done anywhere.
        for folder in ["pending", "inflight", "tmp", "incoming"] {
            XCTAssertEqual(spool.files(in: folder).filter { $0 != "cam" }, [], "\(label): \(folder)/ is empty")
        }
        XCTAssertEqual(spool.files(in: "incoming/cam"), [], "\(label): incoming/cam/ is empty")
        // Nothing lost: each payload reached the receiver (answered 2xx) or sits in failed/ with a
        // reason, unless the crash came before `enqueue --move` took it (it is still at its source).
        let accepted = receiver.requests.filter { ($0.answeredStatus ?? 0) / 100 == 2 && $0.bodyComplete }
        let failed = try failedPayloads(spool, label: label)
        for (i, bytes) in payloads.enumerated() {
            if scenario == .enqueue && FileManager.default.fileExists(atPath: sources[i]) { continue }
            XCTAssertTrue(
                accepted.contains { $0.body == bytes } || failed.contains(bytes),
                "\(label): item \(i) was lost (neither uploaded nor in failed/)")
        }
        for request in receiver.requests where request.bodyComplete {
            XCTAssertTrue(payloads.contains(request.body), "\(label): a body that matches no item was sent")
            // Every request of an item goes to its name's URL, also after recovery made an item of
            // a direct upload the crash cut (its name kept in the blob's attribute).
            if scenario == .ingest || scenario == .direct, let i = payloads.firstIndex(of: request.body) {
                XCTAssertEqual(request.target, "/up/cam/file-\(i).bin", "\(label): sent under another name")
            }
        }
        // No upload after a recorded success; attempts bounded.
        let counts = requestCounts(receiver)
        for id in recordedDone {
            XCTAssertEqual(counts[id], requestsAtCrash[id], "\(label): \(id) was uploaded again after its success was recorded")
        }
        // A crash after a request went out but before its outcome was recorded leaves an interrupted
        // attempt, which counts against --max-interrupted, not --max-attempts: one more request.
        for (id, n) in counts {
            XCTAssertLessThanOrEqual(n, maximumAttempts + 1, "\(label): \(id) was sent \(n) times")
        }
    }

    /// Ids whose success (`done`) is recorded in index.wal.
    private func doneRecords(in spool: TestSpool) -> Set<String> {
        let text = (try? String(contentsOfFile: spool.path + "/index.wal", encoding: .utf8)) ?? ""
        var ids = Set<String>()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count >= 5, fields[0] == "R", fields[3] == "done" { ids.insert(String(fields[4])) }
        }
        return ids
    }

    private func requestCounts(_ receiver: UploadReceiver) -> [String: Int] {
        var counts: [String: Int] = [:]
        for request in receiver.requests { counts[request.header("Idempotency-Key") ?? "", default: 0] += 1 }
        return counts
    }

    /// The blobs in failed/; each one's json must say why it is there.
    private func failedPayloads(_ spool: TestSpool, label: String) throws -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        for name in spool.files(in: "failed") where name.hasSuffix(".blob") {
            blobs.append(Array(try Data(contentsOf: URL(fileURLWithPath: spool.path + "/failed/" + name))))
            let json = try spool.json("failed/" + name.dropLast(5) + ".json")
            XCTAssertFalse((json["failureReason"] as? String ?? "").isEmpty, "\(label): failed/\(name) has no failureReason")
        }
        return blobs
    }
}
