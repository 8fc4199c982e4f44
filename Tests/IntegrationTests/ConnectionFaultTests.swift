import Foundation
import UploadReceiver
import SpoolTestSupport
import XCTest

/// The transports against a server that drops connections, answers without end, or answers with
/// a gigabyte: spoold neither dies, stalls nor grows (issue 11). Drops, resets, deadlines and
/// stops run with every transport; what FoundationNetworking holds of an answer and does with a
/// stopped process is URLSession's alone (`Transport.Only.foundationNetworking`).
///
/// Real sockets on 127.0.0.1; every wait is on an event (process exit, a request the receiver
/// saw or finished, an observer's count). Faults are drawn from a seeded generator whose seed is
/// printed, so a failure can be replayed.
final class ConnectionFaultTests: TransportTestCase {
    /// One item of a drop plan: its payload and the faults its first requests get.
    private struct PlannedItem {
        var name: String
        var bytes: [UInt8]
        var faults: [ScriptedResponse.Fault]
    }

    /// Counts requests per name (the last path component of the target) and answers each name's
    /// n-th request with its n-th planned fault, then 201; counts the 2xx answers.
    private final class DropScript: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String: Int] = [:]
        private var answered = 0
        private let plan: [String: [ScriptedResponse.Fault]]
        private let allAnswered = DispatchSemaphore(value: 0)
        private let expected: Int

        init(_ items: [PlannedItem]) {
            plan = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.faults) })
            expected = items.count
        }

        var script: ResponseScript {
            ResponseScript { [self] request in
                let name = String(request.target.split(separator: "/").last ?? "")
                let n = lock.withLock {
                    seen[name, default: 0] += 1
                    return seen[name]! - 1
                }
                let faults = plan[name] ?? []
                return n < faults.count ? .faulted(faults[n]) : .status(201)
            }
        }

        /// Counts a request the receiver answered 2xx; signals once every item was answered.
        func observe(_ request: ReceivedRequest) {
            guard let status = request.answeredStatus, (200..<300).contains(status), request.bodyComplete else { return }
            let done = lock.withLock {
                answered += 1
                return answered == expected
            }
            if done { allAnswered.signal() }
        }

        func waitForAll(timeout: Double) -> Bool { allAnswered.wait(timeout: .now() + timeout) == .success }
        func requests(for name: String) -> Int { lock.withLock { seen[name] ?? 0 } }
    }

    /// Payload sizes from 0 B to 64 MiB: mostly small, a few past the in-memory limit (4 MiB,
    /// streamed from the descriptor), one of 64 MiB.
    private func plan(seed: UInt64, items: Int, maximumDrops: Int) -> [PlannedItem] {
        var random = SeededRandom(state: seed)
        var sizes = [0, 1, 511, 4 << 20, (4 << 20) + 1, 64 << 20, 9 << 20]
        while sizes.count < items {
            sizes.append(random.int(in: 0...3) == 0 ? random.int(in: 100_000...2_000_000) : random.int(in: 0...60_000))
        }
        return sizes.enumerated().map { i, size in
            let drops = random.int(in: 0...maximumDrops)
            let faults: [ScriptedResponse.Fault] = (0..<drops).map { _ in
                // The edges (before the first byte, after the last) as well as anywhere between.
                let offset: Int64 = switch random.int(in: 0...5) {
                case 0: 0
                case 1: Int64(size)
                default: Int64(random.int(in: 0...max(0, size)))
                }
                return random.int(in: 0...1) == 0 ? .resetAfter(bodyBytes: offset) : .finAfter(bodyBytes: offset)
            }
            return PlannedItem(name: "item-\(i).bin", bytes: quickPayload(size, seed: seed &+ UInt64(i)), faults: faults)
        }
    }

    private func startReceiver(_ script: ResponseScript, store: String? = nil) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script, storeDirectory: store, keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    /// Checks that each item's last request carried its whole payload, byte for byte.
    private func assertDelivered(_ items: [PlannedItem], receiver: UploadReceiver, file: StaticString = #filePath, line: UInt = #line) {
        var stored: [String: String] = [:]
        for request in receiver.requests where request.storedPath != nil {
            stored[String(request.target.split(separator: "/").last ?? "")] = request.storedPath
        }
        for item in items {
            guard let path = stored[item.name], let data = FileManager.default.contents(atPath: path) else {
                XCTFail("\(item.name) never arrived whole", file: file, line: line)
                continue
            }
            XCTAssertTrue(data == Data(item.bytes), "\(item.name): \(data.count) B arrived, \(item.bytes.count) B sent", file: file, line: line)
        }
    }

    // MARK: - Dropped connections

    /// `drain` (the default transport) and `run` (each transport).
    func testDropsAtRandomOffsets_drain_noDeathNoStall_everyItemArrivesWhole() throws {
        try dropsAtRandomOffsets(daemon: false, seed: UInt64(Date().timeIntervalSince1970))
    }

    func testDropsAtRandomOffsets_run_noDeathNoStall_everyItemArrivesWhole() throws {
        try forEachTransport { transport in
            try dropsAtRandomOffsets(daemon: true, seed: UInt64(Date().timeIntervalSince1970) &+ (transport == .curl ? 2 : 1))
        }
    }

    /// Attempts that ended on the idle timeout with URLSession: at most one per run. In about one
    /// run in ten of the random-drop test, libdispatch (under FoundationNetworking) loses the
    /// write interest of a connection: the socket is writable and its send queue empty, but its
    /// `EPOLLOUT` is missing from libdispatch's epoll set, so libcurl never sends the rest of the
    /// body and the attempt waits for the idle timeout (docs/performance.md "Known limits"). libcurl used
    /// directly polls its own sockets and is allowed none.
    static let urlSessionStallsAllowed = 1

    /// An attempt that ended on a stall: the idle timeout, or the transport's stall watch
    /// ("stalled: no body byte taken ..."), which ends one sooner.
    static func isStall(_ error: String?) -> Bool {
        guard let error else { return false }
        return error.contains("within the idle timeout") || error.hasPrefix("stalled")
    }

    /// About 50 items, up to four drops each (RST or FIN at a random body offset), then 201.
    /// `--idle-timeout 5`: the stall watch ends a stalled attempt after half of it (2.5 s), and
    /// more than the allowed stalls blow the time limit.
    private func dropsAtRandomOffsets(daemon: Bool, seed: UInt64) throws {
        let transport = self.transport ?? .urlSession
        print("ConnectionFaultTests seed \(seed) (\(daemon ? "run" : "drain"), \(transport))")
        let items = plan(seed: seed, items: 50, maximumDrops: 4)
        let drops = DropScript(items)
        let spool = try TestSpool(self)
        let receiver = try startReceiver(drops.script, store: spool.root)
        receiver.setObserver { drops.observe($0) }
        for item in items { try spool.drop(item.name, item.bytes) }
        let arguments = [daemon ? "run" : "drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/",
                         "--retry-base", "0.05", "--max-backoff", "0.2", "--max-attempts", "6", "--settle", "0", "--keep-done",
                         "--idle-timeout", "5"] + transportArguments
        let started = Date()

        let result: SpooldProcess.Result
        if daemon {
            let process = try SpooldProcess(arguments)
            addTeardownBlock { process.signal(SIGKILL) }
            XCTAssertTrue(drops.waitForAll(timeout: 60), process.readErr())
            process.signal(SIGTERM)
            result = try process.wait(timeout: 30)
        } else {
            result = try SpooldProcess.run(arguments, timeout: 90)
        }

        let elapsed = Date().timeIntervalSince(started)
        XCTAssertNil(result.signal, "spoold died (seed \(seed)): \(result.stderr.suffix(2000))")
        XCTAssertEqual(result.exitCode, 0, "seed \(seed): \(result.stderr.suffix(2000))")
        XCTAssertLessThan(elapsed, 45, "a dropped connection costs a backoff, never an idle timeout (seed \(seed))")
        XCTAssertEqual(spool.files(in: "failed"), [], "seed \(seed)")
        XCTAssertEqual(spool.files(in: "pending") + spool.files(in: "inflight"), [], "seed \(seed)")
        assertDelivered(items, receiver: receiver)
        let totalDrops = items.reduce(0) { $0 + $1.faults.count }
        XCTAssertGreaterThan(totalDrops, 50)
        var done: [String: [String: Any]] = [:]
        for name in spool.files(in: "done") where name.hasSuffix(".json") {
            let json = try spool.json("done/" + name)
            done[json["originalName"] as? String ?? ""] = json
        }
        var stalls = 0
        for item in items {
            let json = try XCTUnwrap(done[item.name], item.name)
            let attempts = json["attempts"] as? [[String: Any]] ?? []
            let outcomes = attempts.map { $0["outcome"] as? String ?? "?" }
            let stalled = attempts.filter { ConnectionFaultTests.isStall($0["error"] as? String) }.count
            stalls += stalled
            // Each drop costs one attempt (libcurl may also resend a body on its own after a
            // drop on a reused connection, which the receiver counts as a request).
            XCTAssertEqual(outcomes.last, "success", "\(item.name): \(outcomes)")
            XCTAssertTrue(outcomes.dropLast().allSatisfy { $0 == "retryable" }, "\(item.name): \(outcomes)")
            XCTAssertLessThanOrEqual(outcomes.count, item.faults.count + 1 + stalled, "\(item.name): \(outcomes)")
            XCTAssertGreaterThanOrEqual(drops.requests(for: item.name), item.faults.count + 1)
        }
        print("ConnectionFaultTests seed \(seed): \(totalDrops) drops, \(stalls) attempt(s) ended on the idle timeout, \(String(format: "%.1f", elapsed)) s")
        let allowed = transport == .urlSession ? ConnectionFaultTests.urlSessionStallsAllowed : 0
        XCTAssertLessThanOrEqual(stalls, allowed, "attempts that waited for the idle timeout after a drop (seed \(seed))")
    }

    func testResetBatch_ofStreamedItems_finishesInSeconds_oneAttemptPerReset() throws {
        try forEachTransport { _ in
            let size = 6 << 20
            let items = (0..<12).map { i in
                PlannedItem(name: "big-\(i).bin", bytes: quickPayload(size, seed: UInt64(100 + i)),
                            faults: [.resetAfter(bodyBytes: Int64(size / 3 + i * 1000))])
            }
            let drops = DropScript(items)
            let spool = try TestSpool(self)
            let receiver = try startReceiver(drops.script, store: spool.root)
            for item in items { try spool.drop(item.name, item.bytes) }
            let started = Date()

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "0.05", "--settle", "0",
                 "--keep-done", "--idle-timeout", "10"] + transportArguments, timeout: 60)

            XCTAssertNil(result.signal, result.stderr)
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertLessThan(Date().timeIntervalSince(started), 20, "no more than one attempt waited for the idle timeout")
            assertDelivered(items, receiver: receiver)
            var stalls = 0
            for name in spool.files(in: "done") where name.hasSuffix(".json") {
                let attempts = try XCTUnwrap(spool.json("done/" + name)["attempts"] as? [[String: Any]])
                // libdispatch's lost write interest (see `urlSessionStallsAllowed`) costs one idle timeout.
                let stalled = attempts.filter { ConnectionFaultTests.isStall($0["error"] as? String) }.count
                stalls += stalled
                XCTAssertEqual(attempts.map { $0["outcome"] as? String }, ["retryable"] + Array(repeating: "retryable", count: stalled) + ["success"])
            }
            XCTAssertLessThanOrEqual(stalls, ConnectionFaultTests.urlSessionStallsAllowed)
        }
    }

    // MARK: - Answers

    /// Peak RSS allowed while a server floods spoold with an answer: "well under 128 MiB" (issue
    /// 11). An idle daemon holds about 37 MiB; since the cut answer's connection is aborted as
    /// soon as it is found by its traffic (`URLSessionTransport.breakFlood`), the flood adds
    /// nothing measurable (37-39 MiB in 10 runs beside two busy loops). Before, the connection
    /// lived until FoundationNetworking's `cancel` got through its busy work queue, seconds during
    /// which it held ~5-8 MiB more per second: 37-144 MiB, once 339 MiB in a loaded suite run.
    static let peakBoundKiB = 96 * 1024
    /// The cut answer's connection is closed within this many seconds of the outcome (measured:
    /// under 0.05 s; up to 16 s when it waited for FoundationNetworking's cancel).
    static let closeBoundSeconds = 3.0

    func testOneGiBAnswer_memoryStaysFlat_itemUploaded_excerptKept() throws {
        try only(.foundationNetworking) { _ in
            let (peak, attempt) = try runUntilAnswered(ScriptedResponse(status: 201, fault: .largeAnswer(bytes: 1 << 30)), waitSeconds: 60)

            XCTAssertLessThan(peak, ConnectionFaultTests.peakBoundKiB, "peak RSS \(peak) KiB while a 1 GiB answer came in")
            XCTAssertEqual(attempt["httpStatus"] as? Int, 201)
            XCTAssertEqual((attempt["responseExcerpt"] as? String)?.count, 512, "the first 512 bytes are kept")
        }
    }

    func testEndlessFastAnswer_isCutAfterOneMiB_itsStatusCounts_memoryStaysFlat() throws {
        try only(.foundationNetworking) { _ in
            // The receiver finishes the request when spoold closes the connection.
            let (peak, attempt) = try runUntilAnswered(ScriptedResponse(status: 200, fault: .endlessAnswer), waitSeconds: 30)

            XCTAssertLessThan(peak, ConnectionFaultTests.peakBoundKiB, "peak RSS \(peak) KiB during an endless answer")
            XCTAssertEqual(attempt["httpStatus"] as? Int, 200)
            XCTAssertEqual(attempt["outcome"] as? String, "success")
        }
    }

    /// Runs the daemon on one item against `answer` until the item is recorded in done/, then stops
    /// it (it must exit 0, not die, within 30 s); returns the daemon's peak RSS and the item's
    /// recorded attempt.
    ///
    /// The peak is read once the receiver has finished the request (for an answer cut short, when
    /// spoold closed the connection), or 5 s after the item was done: FoundationNetworking closes
    /// a cut connection when its work queue gets to the cancel, which a loaded machine delayed
    /// past 30 s in some suite runs; the attempt does not wait for it, and the stop does not either.
    private func runUntilAnswered(_ answer: ScriptedResponse, waitSeconds: Double) throws -> (peakKiB: Int, attempt: [String: Any]) {
        let receiver = try startReceiver(.always(answer))
        let spool = try TestSpool(self)
        try spool.drop("item.txt", payload(1000, seed: 1))
        let daemon = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--keep-done"] + transportArguments)
        addTeardownBlock { daemon.signal(SIGKILL) }

        let recorded = waitUntil(timeout: waitSeconds) { spool.files(in: "done").contains { $0.hasSuffix(".json") } }
        XCTAssertTrue(recorded, "not recorded in done/ within \(waitSeconds) s: \(daemon.readErr())")
        let cutAt = Date()
        let closed = receiver.waitForRequests(count: 1, timeout: ConnectionFaultTests.closeBoundSeconds)
        let peak = peakResidentKiB(of: daemon)
        print("ConnectionFaultTests \(answer.fault): peak RSS \(peak) KiB; connection closed \(Date().timeIntervalSince(cutAt)) s after the outcome was recorded")
        XCTAssertTrue(closed, "the flooded connection was still open \(ConnectionFaultTests.closeBoundSeconds) s after the outcome")
        daemon.signal(SIGTERM)
        let result = try daemon.wait(timeout: 30)

        XCTAssertNil(result.signal, result.stderr)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 10), "the connection outlived the daemon")
        let json = try spool.json("done/" + XCTUnwrap(spool.files(in: "done").first { $0.hasSuffix(".json") }))
        return (peak, try XCTUnwrap((json["attempts"] as? [[String: Any]])?.first))
    }

    func testTricklingAnswer_endsAtTheDeadline() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.always(ScriptedResponse(status: 200, fault: .tricklingAnswer)))
            let spool = try TestSpool(self)
            try spool.drop("trickle.txt", payload(1000, seed: 3))
            let started = Date()

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--timeout", "2",
                 "--idle-timeout", "1", "--max-attempts", "1"] + transportArguments, timeout: 30)

            let elapsed = Date().timeIntervalSince(started)
            XCTAssertNil(result.signal, result.stderr)
            XCTAssertEqual(result.exitCode, 1, result.stderr)
            XCTAssertGreaterThanOrEqual(elapsed, 2, "the answer never pauses for the 1 s idle timeout")
            XCTAssertLessThan(elapsed, 8, "--timeout ends an answer that never ends")
            let json = try spool.json("failed/" + XCTUnwrap(spool.files(in: "failed").first { $0.hasSuffix(".json") }))
            let attempt = try XCTUnwrap((json["attempts"] as? [[String: Any]])?.first)
            XCTAssertTrue((attempt["error"] as? String ?? "").contains("deadline"), "\(attempt)")
        }
    }

    // MARK: - Cancelling streamed uploads

    /// A server that reads each name's first request head, then stops reading (the client's
    /// send blocks mid-body) until `release`; later requests get 201. Counts 201s per round.
    private final class StallingScript: @unchecked Sendable {
        let heads = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let answered = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var seen: Set<String> = []

        var script: ResponseScript {
            ResponseScript { [self] request in
                let first = lock.withLock { seen.insert(request.target).inserted }
                guard first else { return .status(201) }
                heads.signal()
                if release.wait(timeout: .now() + 30) == .success { release.signal() }
                return .status(201)
            }
        }

        func observe(_ request: ReceivedRequest) {
            if request.answeredStatus == 201, request.bodyComplete { answered.signal() }
        }

        func wait(_ semaphore: DispatchSemaphore, count: Int, timeout: Double) -> Bool {
            let deadline = DispatchTime.now() + timeout
            return (0..<count).allSatisfy { _ in semaphore.wait(timeout: deadline) == .success }
        }
    }

    func testStoppedLongerThanTheDeadline_thenContinued_theDeadlineCancelsStreamedUploadsSafely() throws {
        try only(.foundationNetworking) { _ in
            let stall = StallingScript()
            let spool = try TestSpool(self)
            let receiver = try startReceiver(stall.script)
            receiver.setObserver { stall.observe($0) }
            addTeardownBlock { stall.release.signal() }
            let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0",
                                            "--timeout", "1", "--retry-base", "0.05"] + transportArguments)
            addTeardownBlock { daemon.signal(SIGKILL) }

            for round in 0..<2 {
                for i in 0..<3 { try spool.drop("r\(round)-\(i).bin", quickPayload(16 << 20, seed: UInt64(round * 10 + i))) }
                // Three uploads are mid-body, blocked on a server that stopped reading.
                XCTAssertTrue(stall.wait(stall.heads, count: 3, timeout: 30), daemon.readErr())
                daemon.signal(SIGSTOP)
                usleep(1_500_000)  // the scenario itself: stopped past the 1 s deadline
                daemon.signal(SIGCONT)
                // The deadline cancels all three at once; their retries get 201.
                XCTAssertTrue(stall.wait(stall.answered, count: 3, timeout: 30), daemon.readErr())
            }
            stall.release.signal()
            daemon.signal(SIGTERM)
            let result = try daemon.wait(timeout: 30)

            XCTAssertNil(result.signal, "spoold died: \(result.stderr.suffix(3000))")
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(spool.files(in: "failed"), [])
            XCTAssertEqual(result.stderr.components(separatedBy: "deadline").count - 1, 6, result.stderr)
        }
    }

    func testSecondStopRequest_cancelsStreamedUploadsMidBody_exitsCleanly_attemptsHandedBack() throws {
        try forEachTransport { _ in
            let stall = StallingScript()
            let spool = try TestSpool(self)
            let receiver = try startReceiver(stall.script)
            addTeardownBlock { stall.release.signal() }
            for i in 0..<3 { try spool.drop("s\(i).bin", quickPayload(16 << 20, seed: UInt64(40 + i))) }
            let daemon = try SpooldProcess(["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"] + transportArguments)
            addTeardownBlock { daemon.signal(SIGKILL) }

            XCTAssertTrue(stall.wait(stall.heads, count: 3, timeout: 30), daemon.readErr())
            // Two stop requests (two of one signal could merge into one while pending).
            daemon.signal(SIGTERM)
            daemon.signal(SIGINT)
            let result = try daemon.wait(timeout: 30)

            XCTAssertNil(result.signal, "spoold died: \(result.stderr.suffix(3000))")
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertTrue(result.stderr.contains("cancelling 3 upload(s)"), result.stderr)
            let pending = spool.files(in: "pending").filter { $0.hasSuffix(".json") }
            XCTAssertEqual(pending.count, 3, "\(spool.itemFiles)")
            XCTAssertTrue(pending.allSatisfy { $0.contains(".a0.") }, "the cancelled attempts were handed back: \(pending)")
        }
    }

    // MARK: - Helpers

    /// Seeded bytes made fast: one 64 KiB seeded block repeated, each copy stamped with its
    /// index, so a lost, doubled or misplaced piece still shows.
    private func quickPayload(_ count: Int, seed: UInt64) -> [UInt8] {
        let block = payload(min(count, 64 * 1024), seed: seed)
        guard count > block.count else { return block }
        var out = [UInt8]()
        out.reserveCapacity(count)
        var index: UInt64 = 0
        while out.count < count {
            let start = out.count
            out.append(contentsOf: block.prefix(count - start))
            withUnsafeBytes(of: index) { stamp in
                for (k, byte) in stamp.prefix(out.count - start).enumerated() { out[start + k] = byte }
            }
            index += 1
        }
        return out
    }

    /// The process's peak resident set so far (`VmHWM` in /proc/PID/status), in KiB.
    private func peakResidentKiB(of process: SpooldProcess) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(process.process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? Int.max
    }
}
