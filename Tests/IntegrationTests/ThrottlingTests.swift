import Foundation
import Glibc
import SpoolCore
import Synchronization
import UploadReceiver
import XCTest

/// A store that throttles, with the built binary: three daemons feeding one S3 stand-in that
/// accepts 100 PUTs a second and answers the rest `503 SlowDown` store every item once (60 each) and park
/// none; a throttled daemon paused by a Retry-After shows it in `spoold status`.
/// (`scripts/bench throttle` runs the issue's full fleet and prints its times.) Both run with
/// every transport: each reads the throttling answers its own way.
final class ThrottlingTests: TransportTestCase {
    func testThreeDaemons_againstAThrottlingStore_storeEveryItemOnce_noneFailed() throws {
        try forEachTransport { _ in
            let store = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-throttle-\(UUID().uuidString)").path
            addTeardownBlock { try? FileManager.default.removeItem(atPath: store) }
            let receiver = UploadReceiver(
                script: .throttling(perSecond: 100, .always(.status(200))), storeDirectory: store, keepBodiesInMemory: false)
            let port = try receiver.start()
            addTeardownBlock { receiver.stop() }
            let perDaemon = 60
            var spools: [TestSpool] = []
            for d in 0..<3 {
                let spool = try TestSpool(self)
                for i in 0..<perDaemon { try spool.drop("d\(d)-\(i).bin", payload(4096, seed: UInt64(d * 1000 + i))) }
                spools.append(spool)
            }

            let daemons = try spools.map { spool in
                try SpooldProcess(
                    ["drain", "--spool", spool.path, "--url", "s3://bucket/fleet/", "--s3-endpoint", "http://127.0.0.1:\(port)",
                     "--concurrency", "16", "--settle", "0", "--keep-done"] + transportArguments,
                    environment: throttlingEnvironment(spool.root))
            }
            let results = try daemons.map { try $0.wait(timeout: 120) }

            for (spool, result) in zip(spools, results) {
                XCTAssertEqual(result.exitCode, 0, result.stderr)
                XCTAssertEqual(spool.files(in: "failed"), [], "throttling parks nothing")
                XCTAssertEqual(spool.itemFiles.filter { !$0.hasPrefix("done/") }, [])
                // --keep-done keeps each item's history: one attempt, the one that succeeded.
                let done = spool.files(in: "done").filter { $0.hasSuffix(".json") }
                XCTAssertEqual(done.count, perDaemon)
                XCTAssertEqual(done.filter { !$0.hasSuffix(".a1.json") }, [], "no throttled attempt was counted")
                XCTAssertTrue(result.stderr.contains("the endpoint throttles (HTTP 503: S3 SlowDown): requests limited to"), result.stderr)
            }
            let stored = ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []).map { $0.drop { $0 != "-" }.dropFirst() }
            let expected = (0..<3).flatMap { d in (0..<perDaemon).map { "d\(d)-\($0).bin" } }
            XCTAssertEqual(stored.map(String.init).sorted(), expected.sorted(), "every item stored exactly once")
            let answered = receiver.requests.compactMap(\.answeredStatus)
            let accepted = answered.filter { $0 == 200 }.count
            let throttled = answered.filter { $0 == 503 }.count
            print("three daemons: \(accepted) accepted, \(throttled) throttled")
            XCTAssertEqual(accepted, 3 * perDaemon)
            XCTAssertGreaterThan(throttled, 0, "the store did throttle")
            XCTAssertLessThan(throttled, accepted, "fewer throttled answers than accepted ones: \(throttled) vs \(accepted)")
        }
    }

    /// A 429 with `Retry-After: 3600` (capped by --max-backoff 60) pauses the daemon's requests:
    /// `spoold status` says so, the attempt is not counted, and nothing is sent meanwhile.
    func testPausedByRetryAfter_statusShowsIt() throws {
        try forEachTransport { _ in
            let receiver = UploadReceiver(script: .always(.status(429, body: "slow down\n", headers: [("Retry-After", "3600")])))
            let port = try receiver.start()
            addTeardownBlock { receiver.stop() }
            let spool = try TestSpool(self)
            try spool.drop("waiting.bin", payload(1000, seed: 3))
            let daemon = try SpooldProcess(
                ["run", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0", "--max-backoff", "60"]
                    + transportArguments)
            addTeardownBlock { daemon.signal(SIGKILL) }
            let marker = spool.path + "/throttled"
            XCTAssertTrue(waitUntil(timeout: 30) { FileManager.default.fileExists(atPath: marker) }, daemon.readErr())

            let status = try SpooldProcess.run(["status", "--spool", spool.path])
            let line = status.lines.first { $0.hasPrefix("requests throttled since ") } ?? ""
            XCTAssertTrue(line.contains("(HTTP 429; 1 throttled answers); every request waits until "), status.stdout)
            let json = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let requests = try XCTUnwrap(object["requests"] as? [String: Any], json.stdout)
            XCTAssertEqual(requests["throttled"] as? Bool, true)
            XCTAssertEqual(requests["throttledAnswers"] as? Int, 1)
            XCTAssertNotNil(requests["pausedUntil"] as? String)
            XCTAssertNotNil(requests["ratePerSecond"] as? Double)

            // (That the daemon sleeps meanwhile, BlockedIsIdleTests measures: BlockedState.throttledPaused.)
            XCTAssertEqual(receiver.requests.count, 1, "nothing sent during the pause")
            // The marker is written when the answer is taken, the hand-back is committed in the same
            // step just after: wait for it rather than read the folder once.
            XCTAssertTrue(
                waitUntil(timeout: 30) { spool.files(in: "pending").contains { $0.hasSuffix(".a0.json") } },
                "the attempt was handed back: \(spool.files(in: "pending"))")

            daemon.signal(SIGTERM)
            let result = try daemon.wait(timeout: 30)
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "removed when the daemon stops")
        }
    }
}

/// Throttled multipart steps are sent again above the transport (`S3MultipartUpload`), which only
/// delivers their answers (both transports do: `ThrottlingTests`), so this runs once.
final class ThrottledMultipartTests: XCTestCase {
    /// A multipart item whose every step (CreateMultipartUpload, each part, the completion) is
    /// throttled the first time it comes: with one attempt allowed (--max-attempts 1), it goes
    /// up in that attempt, its throttled steps sent again within it.
    func testMultipartItem_everyStepThrottledOnce_goesUpInOneAttempt() throws {
        let seen = Mutex<Set<String>>([])
        let receiver = UploadReceiver(script: ResponseScript { request in
            let query = request.target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            if seen.withLock({ $0.insert(request.method + " " + request.target).inserted }) { return .slowDown }
            switch (request.method, query) {
            case ("POST", "uploads="):
                return .status(200, body: "<InitiateMultipartUploadResult><UploadId>u</UploadId></InitiateMultipartUploadResult>")
            case ("PUT", _):
                return .status(200, headers: [("ETag", "\"\(request.index)\"")])
            default:
                return .status(200, body: "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>")
            }
        })
        let port = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        try spool.drop("big.bin", payload((5 << 20) + 1, seed: 40))  // two parts of 5 MiB

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "s3://bucket/", "--s3-endpoint", "http://127.0.0.1:\(port)", "--settle", "0",
             "--s3-part-size", "5M", "--max-attempts", "1", "--concurrency", "2"],
            environment: throttlingEnvironment(spool.root), timeout: 120)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(spool.itemFiles, [], "uploaded, not in failed/")
        let answered = receiver.requests.compactMap(\.answeredStatus)
        XCTAssertEqual(answered.filter { $0 == 503 }.count, 4, "each of the 4 steps throttled once")
        XCTAssertEqual(answered.filter { $0 == 200 }.count, 4)
        XCTAssertEqual(receiver.requests.filter { $0.method == "GET" }.count, 0, "one pass: no ListParts of a resumed pass")
    }
}

/// A run's environment: test credentials, nothing from the machine's own AWS setup.
private func throttlingEnvironment(_ root: String) -> [String: String] {
    [
        "HOME": root, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
        "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
        "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
    ]
}
