import Foundation
import SpoolCore
import UploadReceiver
import XCTest

/// The endpoint decides what success is (issue 14): `--retry-on`/`--final-on`,
/// `--content-digest`, `--success-json`, and the `--on-success`/`--on-failure` hooks, through
/// the binary against the loopback receiver. The transport's share of them (digests over the
/// body it streams, answers it reads) runs with every transport; the status lists, the rule's
/// syntax and the hooks sit above it and run once.
final class EndpointRulesTests: TransportTestCase {
    private func startReceiver(_ script: ResponseScript = .always(201)) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script)
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    private func drain(_ spool: TestSpool, _ receiver: UploadReceiver, _ extra: [String] = [], timeout: Double = 60)
        throws -> SpooldProcess.Result
    {
        try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "0.05", "--settle", "0"]
                + transportArguments + extra,
            timeout: timeout)
    }

    private func onlyJSON(in spool: TestSpool, _ folder: String) throws -> [String: Any] {
        let names = spool.files(in: folder).filter { $0.hasSuffix(".json") }
        XCTAssertEqual(names.count, 1, "\(folder): \(names)")
        return try spool.json("\(folder)/\(try XCTUnwrap(names.first))")
    }

    private func attempts(_ json: [String: Any]) throws -> [[String: Any]] {
        try XCTUnwrap(json["attempts"] as? [[String: Any]])
    }

    // MARK: - Retry classes

    func testRetryOn404_isRetriedUntilAccepted() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.perKey([.status(404), .status(404)], then: .status(201)))
            let spool = try TestSpool(self)
            try spool.drop("late.txt", [1, 2, 3])

            let result = try drain(spool, receiver, ["--retry-on", "404,409", "--keep-done"])

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(receiver.requests.count, 3)
            let outcomes = try attempts(try onlyJSON(in: spool, "done")).map { $0["outcome"] as? String }
            XCTAssertEqual(outcomes, ["retryable", "retryable", "success"])
        }
    }

    func testFinalOn503_parksTheItemAfterOneRequest() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.always(.status(503, body: "gone for good")))
            let spool = try TestSpool(self)
            try spool.drop("final.txt", [1, 2, 3])

            let result = try drain(spool, receiver, ["--final-on", "503"])

            XCTAssertEqual(result.exitCode, 1, result.stderr)
            XCTAssertEqual(receiver.requests.count, 1, "503 is retried by default; --final-on 503 stops at one")
            let json = try onlyJSON(in: spool, "failed")
            XCTAssertEqual(try attempts(json).map { $0["outcome"] as? String }, ["final"])
            XCTAssertTrue((json["failureReason"] as? String ?? "").contains("HTTP 503"), "\(json)")
        }
    }

    func testStatusLists_withJunk_exitTwoNamingTheEntry_andNothingIsSent() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        try spool.drop("kept.txt", [1])
        let cases: [([String], String)] = [
            (["--retry-on", "404,4x9"], "'4x9'"),
            (["--final-on", "99"], "'99'"),
            (["--retry-on", "600"], "'600'"),
            (["--retry-on", "404,,409"], "empty entry"),
            (["--final-on", "200"], "'200'"),
            (["--retry-on", "404,409", "--final-on", "409"], "both name 409"),
        ]
        for (options, expected) in cases {
            let result = try drain(spool, receiver, options)
            XCTAssertEqual(result.exitCode, 2, "\(options): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(options): \(result.stderr)")
        }
        XCTAssertEqual(receiver.requests.count, 0)
    }

    // MARK: - Content-Digest

    private func expectedDigest(_ body: [UInt8]) -> String {
        "sha-256=:" + Data(SHA256.hash(body)).base64EncodedString() + ":"
    }

    func testContentDigest_coversTheExactBody_smallLargeAndMultipart() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver()
            let spool = try TestSpool(self)
            let large = payload(4 * 1024 * 1024 + 17, seed: 14)  // above the in-memory limit: streamed from the file
            try spool.drop("hello.txt", Array("hello".utf8))
            try spool.drop("large.bin", large)

            let plain = try drain(spool, receiver, ["--content-digest", "sha-256"])
            XCTAssertEqual(plain.exitCode, 0, plain.stderr)
            let byName = Dictionary(uniqueKeysWithValues: receiver.requests.map { ($0.target, $0) })
            let hello = try XCTUnwrap(byName["/up/hello.txt"])
            XCTAssertEqual(hello.header("Content-Digest"), "sha-256=:LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=:")
            let big = try XCTUnwrap(byName["/up/large.bin"])
            XCTAssertEqual(big.body.count, large.count)
            XCTAssertEqual(big.header("Content-Digest"), expectedDigest(large))

            try spool.drop("form.txt", Array("a form".utf8))
            let form = try drain(spool, receiver, ["--content-digest", "SHA-256", "--form", "file"])
            XCTAssertEqual(form.exitCode, 0, form.stderr)
            let multipart = try XCTUnwrap(receiver.requests.last)
            XCTAssertTrue(multipart.header("Content-Type")?.hasPrefix("multipart/form-data") ?? false)
            XCTAssertEqual(multipart.header("Content-Digest"), expectedDigest(multipart.body), "over the whole multipart body")
            XCTAssertNotEqual(multipart.header("Content-Digest"), expectedDigest(Array("a form".utf8)))
        }
    }

    func testContentDigest_isAbsentByDefault_andAnUnknownAlgorithmIsAUsageError() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver()
            let spool = try TestSpool(self)
            try spool.drop("plain.txt", [1, 2, 3])
            let bad = try drain(spool, receiver, ["--content-digest", "md5"])
            XCTAssertEqual(bad.exitCode, 2)
            XCTAssertTrue(bad.stderr.contains("'md5'"), bad.stderr)
            XCTAssertEqual(receiver.requests.count, 0)

            let result = try drain(spool, receiver)
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertNil(try XCTUnwrap(receiver.requests.first).header("Content-Digest"))
        }
    }

    // MARK: - Success inside the body

    func testSuccessJSON_a200WithAFailureInside_isRetried_untilTheBodySaysSuccess() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.perKey(
                [.status(200, body: #"{"status": {"code": 500, "message": "storage busy"}}"#),
                 .status(200, body: #"{"status": {"code": 503}}"#)],
                then: .status(200, body: #"{"status": {"code": 200}}"#)))
            let spool = try TestSpool(self)
            try spool.drop("inside.txt", [1, 2, 3])

            let result = try drain(spool, receiver, ["--success-json", "status.code=200", "--keep-done"])

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(receiver.requests.count, 3)
            let history = try attempts(try onlyJSON(in: spool, "done"))
            XCTAssertEqual(history.map { $0["outcome"] as? String }, ["retryable", "retryable", "success"])
            XCTAssertEqual(history[0]["httpStatus"] as? Int, 200)
            XCTAssertEqual(history[0]["error"] as? String, "the answer's status.code is 500, not 200 (--success-json status.code=200)")
            XCTAssertEqual(history[0]["responseExcerpt"] as? String, #"{"status": {"code": 500, "message": "storage busy"}}"#)
            XCTAssertNil(history[2]["error"])
        }
    }

    func testSuccessJSON_anAnswerThatIsNotJSON_failsTheRule_andTheItemIsParkedWithTheReason() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.always(.status(200, body: "<html>Saved!</html>")))
            let spool = try TestSpool(self)
            try spool.drop("html.txt", [1, 2, 3])

            let result = try drain(spool, receiver, ["--success-json", "ok=true"])

            XCTAssertEqual(result.exitCode, 1, result.stderr)
            XCTAssertEqual(receiver.requests.count, 3, "retryable: every attempt is used")
            let json = try onlyJSON(in: spool, "failed")
            let history = try attempts(json)
            XCTAssertEqual(history.map { $0["outcome"] as? String }, ["retryable", "retryable", "retryable"])
            XCTAssertEqual(history[2]["responseExcerpt"] as? String, "<html>Saved!</html>")
            let reason = json["failureReason"] as? String ?? ""
            XCTAssertTrue(reason.hasPrefix("HTTP 200: the answer is not JSON"), reason)
            XCTAssertTrue(reason.hasSuffix("on attempt 3 of 3"), reason)
            XCTAssertTrue(result.stderr.contains("gave up on"), result.stderr)
        }
    }

    func testSuccessJSON_anAnswerLargerThanTheBound_failsTheRule() throws {
        try forEachTransport { _ in
            let padding = String(repeating: "x", count: 70 * 1024)
            let receiver = try startReceiver(.always(.status(200, body: #"{"ok": true, "pad": "\#(padding)"}"#)))
            let spool = try TestSpool(self)
            try spool.drop("big-answer.txt", [1])

            let result = try drain(spool, receiver, ["--success-json", "ok=true", "--max-attempts", "1"])

            XCTAssertEqual(result.exitCode, 1, result.stderr)
            let json = try onlyJSON(in: spool, "failed")
            XCTAssertTrue((json["failureReason"] as? String ?? "").contains("larger than 64 KiB"), "\(json)")
            let excerpt = try XCTUnwrap(try attempts(json)[0]["responseExcerpt"] as? String)
            XCTAssertEqual(excerpt.utf8.count, 512, "the history keeps the usual excerpt only")
        }
    }

    func testSuccessJSON_invalidRule_isAUsageError() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        for rule in ["status.code", "status..code=1", "a={}"] {
            let result = try drain(spool, receiver, ["--success-json", rule])
            XCTAssertEqual(result.exitCode, 2, "\(rule): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("--success-json"), result.stderr)
        }
    }

    // MARK: - Hooks

    /// A hook that records its environment in DIR/KIND-ID, one field a line.
    private func recordingHook(_ kind: String, into dir: String, exit code: Int = 0) -> String {
        #"printf '%s\n' "$SPOOLD_ID" "$SPOOLD_NAME" "$SPOOLD_STATUS" "$SPOOLD_SIZE" "$SPOOLD_SPOOL" "$SPOOLD_REASON" > "\#(dir)/\#(kind)-$SPOOLD_ID"; exit \#(code)"#
    }

    private func hookRecords(_ dir: String, _ kind: String) throws -> [[String]] {
        try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(kind + "-") }.sorted().map {
            try String(contentsOfFile: dir + "/" + $0, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast().map(String.init)
        }
    }

    func testHooks_runOncePerOutcome_withTheItemInTheEnvironment_andAFailingHookChangesNothing() throws {
        let receiver = try startReceiver(ResponseScript { request in
            request.target.contains("refused") ? .status(422, body: "no") : .status(201)
        })
        let spool = try TestSpool(self)
        let dir = spool.root + "/hooks"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try spool.drop("my file.txt", [1, 2, 3, 4, 5])
        try spool.drop("refused.txt", [1, 2])

        let result = try drain(spool, receiver, [
            "--on-success", recordingHook("ok", into: dir, exit: 3),
            "--on-failure", recordingHook("failed", into: dir),
        ])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        let ok = try hookRecords(dir, "ok")
        let failed = try hookRecords(dir, "failed")
        XCTAssertEqual(ok.count, 1, "one on-success run: \(ok)")
        XCTAssertEqual(failed.count, 1, "one on-failure run: \(failed)")
        XCTAssertEqual(Array(ok[0].dropFirst()), ["my file.txt", "201", "5", spool.path, ""])
        XCTAssertEqual(Array(failed[0].dropFirst().prefix(4)), ["refused.txt", "422", "2", spool.path])
        XCTAssertTrue(failed[0][5].contains("HTTP 422"), "\(failed[0])")
        XCTAssertTrue(spool.files(in: "failed").contains { $0.hasPrefix(failed[0][0]) }, "SPOOLD_ID names the parked item")
        XCTAssertTrue(result.stderr.contains("on-success hook for \(ok[0][0]) exited with status 3"), result.stderr)
        XCTAssertEqual(spool.files(in: "pending"), [], "a failing hook leaves the upload done")
        XCTAssertFalse(spool.files(in: "failed").contains { $0.hasPrefix(ok[0][0]) })
    }

    func testHooks_doNotInheritSecrets_butKeepTheRestOfTheEnvironment() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let dir = spool.root + "/hooks"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try spool.drop("a.txt", [1, 2, 3])
        let secrets = [
            "SPOOLD_TEST_AUTH": "Authorization: Bearer header-env-secret", "AWS_ACCESS_KEY_ID": "aws-key-id-secret",
            "AWS_SECRET_ACCESS_KEY": "aws-secret-key-secret", "AWS_SESSION_TOKEN": "aws-session-token-secret",
        ]

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0",
             "--header-env", "SPOOLD_TEST_AUTH", "--on-success", #"env > "\#(dir)/env-$SPOOLD_ID""#],
            environment: secrets.merging(["SPOOLD_TEST_PLAIN": "plain-value"]) { $1 })

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.first?.header("Authorization"), "Bearer header-env-secret", "the secret was used")
        let name = try XCTUnwrap(FileManager.default.contentsOfDirectory(atPath: dir).first, "the hook ran")
        let environment = try String(contentsOfFile: dir + "/" + name, encoding: .utf8)
        for (variable, value) in secrets {
            XCTAssertFalse(environment.contains(variable + "="), "\(variable) is withheld from hooks")
            XCTAssertFalse(environment.contains(value.split(separator: " ").last!), "the value of \(variable) reaches no hook")
        }
        XCTAssertTrue(environment.contains("SPOOLD_TEST_PLAIN=plain-value\n"), "other variables are inherited: \(environment)")
        XCTAssertTrue(environment.contains("SPOOLD_NAME=a.txt\n"), environment)
    }

    /// spoold raises its own soft descriptor limit to the hard one; a hook gets the limit spoold
    /// was started with, as Go's os/exec gives it back.
    func testHooks_runWithTheDescriptorLimitSpooldWasStartedWith() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else {
            throw XCTSkip("prlimit (util-linux) is not installed")
        }
        let receiver = try startReceiver(.always(201))
        let spool = try TestSpool(self)
        try spool.drop("a.txt", [1])
        let out = spool.root + "/limit"

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0",
             "--on-success", #"ulimit -n > "\#(out)""#],
            timeout: 60, wrapper: ["/usr/bin/prlimit", "--nofile=256:4096"])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "256\n")
    }

    func testHooks_networkFailureHasAnEmptyStatus() throws {
        let receiver = try startReceiver(.always(.faulted(.closeMidBody)))
        let spool = try TestSpool(self)
        let dir = spool.root + "/hooks"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try spool.drop("dropped.bin", payload(64 * 1024, seed: 9))

        let result = try drain(spool, receiver, ["--max-attempts", "1", "--on-failure", recordingHook("failed", into: dir)])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        let failed = try hookRecords(dir, "failed")
        XCTAssertEqual(failed.count, 1)
        XCTAssertEqual(failed.first?[2], "", "no HTTP status: SPOOLD_STATUS is empty")
    }

    func testHooks_aHangingHookIsKilledAfterItsTimeout_andUploadsNeverWaitForHooks() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let dir = spool.root + "/hooks"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for n in 0..<8 { try spool.drop("item-\(n).txt", [UInt8(n)]) }
        let started = Date()

        // The shell starts a grandchild and waits: the timeout must end the whole process group.
        let result = try drain(spool, receiver, [
            "--on-success", #"sleep 300 & echo $! > "\#(dir)/sleeper-$SPOOLD_ID"; wait"#, "--hook-timeout", "2",
        ], timeout: 40)

        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let requests = receiver.requests
        XCTAssertEqual(requests.count, 8)
        let lines = result.stderr.split(separator: "\n")
        let lastUpload = try XCTUnwrap(lines.lastIndex { $0.contains(" info: uploaded ") })
        let firstKill = try XCTUnwrap(lines.firstIndex { $0.contains("still running after") })
        XCTAssertLessThan(lastUpload, firstKill, "all eight uploads are recorded while the first four hooks still hang:\n\(result.stderr)")
        XCTAssertGreaterThanOrEqual(elapsed, 4, "two waves of four hanging hooks, each ended at its 2 s timeout")
        XCTAssertLessThan(elapsed, 25)
        XCTAssertEqual(result.stderr.components(separatedBy: "still running after 2.0 s").count - 1, 8, result.stderr)
        XCTAssertEqual(result.stderr.components(separatedBy: "was ended by signal 15").count - 1, 8, result.stderr)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let pid = try String(contentsOfFile: dir + "/" + name, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            XCTAssertTrue(stat.isEmpty || stat.contains(") Z "), "the hook's grandchild \(pid) was killed with its group: \(stat)")
        }
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testHooks_emptyCommandOrBadTimeout_isAUsageError() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        for options in [["--on-success", " "], ["--on-failure", ""], ["--on-success", "true", "--hook-timeout", "0"]] {
            let result = try drain(spool, receiver, options)
            XCTAssertEqual(result.exitCode, 2, "\(options): \(result.stderr)")
        }
    }

    func testHooks_anUploadInterruptedOnceTooOften_runsOnFailureWhenRecoveryParksIt() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let dir = spool.root + "/hooks"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = spool.root + "/cut.txt"
        try Data([7, 7, 7]).write(to: URL(fileURLWithPath: file))
        let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool.path, file])
        XCTAssertEqual(enqueued.exitCode, 0, enqueued.stderr)
        let id = try XCTUnwrap(enqueued.lines.first)
        // As a daemon killed during each of three attempts leaves it: in inflight/, attempt 3 counted,
        // no answer in the history; --max-interrupted 3 makes this third interruption the last.
        for kind in ["blob", "json"] {
            try FileManager.default.moveItem(
                atPath: "\(spool.path)/pending/\(id).a0.\(kind)", toPath: "\(spool.path)/inflight/\(id).a3.\(kind)")
        }

        let result = try drain(spool, receiver, ["--on-failure", recordingHook("failed", into: dir), "--max-interrupted", "3"])

        XCTAssertEqual(result.exitCode, 1, "recovery parked the item during this drain: \(result.stderr)")
        XCTAssertEqual(receiver.requests.count, 0)
        let failed = try hookRecords(dir, "failed")
        XCTAssertEqual(failed.count, 1, result.stderr)
        XCTAssertEqual(failed.first?[0], id)
        XCTAssertEqual(failed.first?[1], "cut.txt")
        XCTAssertTrue(failed.first?[5].contains("interrupted on attempt 3: spoold stopped mid-upload 3 times (at most 3)") ?? false, "\(failed)")
    }
}
