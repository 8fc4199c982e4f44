import Foundation
import SpoolCore
import XCTest

/// Multipart uploads to a real S3 server (`rclone serve s3`) through `S3FaultProxy`, which counts
/// the bytes sent and can fault a request:
/// - the schedule of issue 31: a file in incoming/ before the daemon starts, SIGKILLed four times,
///   each once a set share of the object more went out, restarted each time, then drained: the
///   bytes sent stay within the object plus, per kill, what was in flight (concurrency x part
///   size), each restart says it resumed and what the store listed, and none starts over;
/// - a start-over that is right (the store lost the upload) is said, with the bytes thrown
///   away, and counted in the metrics;
/// - a completion whose answer is lost after the store completed it is checked with the store
///   and counts as uploaded, nothing sent again;
/// - an abort answered 503 is sent again, stays owed across the daemon's stops (shown by
///   `status` and `check`), and is sent at the next start.
///
/// rclone runs with `--disable-multipart-streaming` where bytes are counted: its streaming mode
/// (the default) answers InvalidPart to a completion that arrives while a request whose client
/// was killed is still writing parts it had acknowledged, and forgets the upload (docs/s3.md "S3-
/// compatible object stores", Limits). spoold then has to send the object again (said and
/// counted, as the test of a lost upload shows), and a bound on the bytes would measure rclone.
///
/// The kill schedule, the lost completion answer (each transport reports the dropped connection
/// its own way) and the aborts run with every transport; the store's NoSuchUpload at ListParts is
/// read above the transport and runs once.
final class S3KillScheduleTests: TransportTestCase {
    static let partSize = 5 << 20
    static let concurrency = 4

    private func environment(_ root: String) -> [String: String] {
        [
            "HOME": root, "AWS_ACCESS_KEY_ID": RcloneS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": RcloneS3Server.secretKey,
            "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "",
            "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "", "SPOOLD_CRASH_AT": "",
        ]
    }

    private func arguments(_ command: String, _ spool: TestSpool, _ proxy: S3FaultProxy, _ more: [String] = []) -> [String] {
        [command, "--spool", spool.path, "--url", "s3://bucket/k/", "--s3-endpoint", proxy.endpoint, "--settle", "0",
         "--s3-part-size", "5M", "--concurrency", "\(Self.concurrency)", "--retry-base", "0.05"] + transportArguments + more
    }

    /// The part log's records (`parts/<id>.log`), for failure messages.
    private func partLog(_ spool: TestSpool) -> String {
        guard let name = spool.files(in: "parts").first(where: { $0 != "aborts.log" }),
              let bytes = FileManager.default.contents(atPath: spool.path + "/parts/" + name)
        else { return "no part log" }
        guard let state = PartLogCodec.decode(Array(bytes)).state else { return "a part log that does not parse" }
        return "upload \(state.uploadID), parts \(state.parts.keys.sorted())"
    }

    // MARK: Part 1: a resumed upload sends only what is missing

    /// Issue 31's run scaled down with its ratios kept: there 400 MiB in 8 MiB parts, 4 at once
    /// (32 MiB in flight), killed each time 60 MiB more went out; here 128 MiB in 5 MiB parts, 2
    /// at once (10 MiB in flight), killed each time 20 MiB more went out (about twice what is in
    /// flight, a sixth of the object). So a restart that sent the object from its start again, or
    /// a drain that did, would break the bound. (The full run: `scripts/soak-s3 --issue31`.)
    func testKilledFourTimesAsBytesGoOut_thenDrained_sendsAtMostTheObjectPlusWhatWasInFlight() throws {
        try forEachTransport { _ in
            let server = try RcloneS3Server.start(self, options: ["--disable-multipart-streaming"])
            let proxy = try S3FaultProxy(self, upstreamPort: server.port)
            let spool = try TestSpool(self)
            let size = (128 << 20) + 7
            let blob = payload(size, seed: 31)
            try spool.drop("big.bin", blob)
            let env = environment(spool.root)
            let concurrency = 2
            let step = Int64(20 << 20)
            var story: [String] = []
            var daemonLogs: [String] = []
            for kill in 1...4 {
                let before = proxy.bytesSent
                let daemon = try SpooldProcess(arguments("run", spool, proxy, ["--concurrency", "\(concurrency)"]), environment: env)
                let reached = waitUntil(timeout: 120) { proxy.bytesSent - before >= step }
                daemon.signal(SIGKILL)
                let ended = try daemon.wait(timeout: 10)
                XCTAssertTrue(reached, "kill \(kill): \(step) B did not go out: \(ended.stderr)")
                daemonLogs.append(ended.stderr)
                story.append("kill \(kill) at \(proxy.bytesSent) B sent; \(partLog(spool))")
            }
            let metrics = spool.root + "/metrics.prom"
            let drained = try SpooldProcess.run(
                arguments("drain", spool, proxy, ["--concurrency", "\(concurrency)", "--metrics-file", metrics]), environment: env, timeout: 120)
            story.append("drained: \(proxy.bytesSent) B sent")
            let trace = story.joined(separator: "\n") + "\nthe store's answers:\n" + proxy.log.filter { !$0.hasPrefix("PUT") }.joined(separator: "\n")

            XCTAssertEqual(drained.exitCode, 0, drained.stderr)
            XCTAssertTrue(server.object("bucket", "k/big.bin") == Data(blob), "the object differs")
            XCTAssertEqual(spool.files(in: "failed"), [])
            // Request heads (SigV4) are under 2 KiB each, a few hundred requests at most.
            let bound = Int64(size) + Int64(4 * concurrency * Self.partSize) + (1 << 20)
            XCTAssertLessThanOrEqual(proxy.bytesSent, bound, "sent beyond the object plus what was in flight at the kills:\n\(trace)")
            let said = (daemonLogs.dropFirst() + [drained.stderr]).joined()
            XCTAssertEqual(said.components(separatedBy: "resuming the multipart upload of ").count - 1, 4, "each restart says it resumed:\n\(said)")
            XCTAssertTrue(said.contains("the store lists "), said)
            XCTAssertFalse((daemonLogs + [drained.stderr]).joined().contains("starting the multipart upload"), "none started over:\n\(trace)")
            let prom = try PromFile(metrics)
            XCTAssertEqual(prom["spoold_multipart_resumes_total"], 1, "the drain's own resume")
            XCTAssertEqual(prom["spoold_multipart_start_overs_total{reason=\"upload_gone\"}"], 0)
            XCTAssertEqual(prom["spoold_multipart_discarded_bytes_total"], 0)
        }
    }

    /// The store lost the upload (aborted behind spoold's back while it was stopped): starting
    /// over is right, and it is said at info with the reason and the bytes thrown away, and
    /// counted in the metrics.
    func testUploadTheStoreLost_startsOver_saidAndCounted() throws {
        let server = try RcloneS3Server.start(self)
        let proxy = try S3FaultProxy(self, upstreamPort: server.port)
        let spool = try TestSpool(self)
        let blob = payload((20 << 20) + 7, seed: 32)
        try spool.drop("lost.bin", blob)
        let env = environment(spool.root)
        let daemon = try SpooldProcess(arguments("run", spool, proxy, ["--concurrency", "1"]), environment: env)
        addTeardownBlock { daemon.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 60) { self.recordedParts(spool).count >= 2 }, daemon.readErr())
        daemon.signal(SIGKILL)
        _ = try daemon.wait(timeout: 10)
        let name = try XCTUnwrap(spool.files(in: "parts").first)
        let state = try XCTUnwrap(PartLogCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: spool.path + "/parts/" + name)))).state)
        let client = S3TestClient(endpoint: server.endpoint, accessKey: RcloneS3Server.accessKey, secretKey: RcloneS3Server.secretKey)
        let aborted = client.send("DELETE", path: "/bucket/k/lost.bin", query: "uploadId=" + state.uploadID)
        XCTAssertEqual(aborted.map { $0.status / 100 }, 2, "the store lost the upload")

        let metrics = spool.root + "/metrics.prom"
        let drained = try SpooldProcess.run(arguments("drain", spool, proxy, ["--metrics-file", metrics]), environment: env, timeout: 60)

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertTrue(server.object("bucket", "k/lost.bin") == Data(blob), "the object differs")
        let thrownAway = state.parts.keys.reduce(Int64(0)) { $0 + state.plan.range(ofPart: $1).length }
        let line = try XCTUnwrap(drained.stderr.split(separator: "\n").first { $0.contains("starting the multipart upload of") }, drained.stderr)
        XCTAssertTrue(line.contains(" info: "), String(line))
        XCTAssertTrue(line.contains("(upload_gone)") && line.contains("NoSuchUpload"), String(line))
        XCTAssertTrue(line.contains("throwing away \(state.parts.count) part(s), \(ByteText.format(thrownAway)), of upload \(state.uploadID)"), String(line))
        let prom = try PromFile(metrics)
        XCTAssertEqual(prom["spoold_multipart_start_overs_total{reason=\"upload_gone\"}"], 1)
        XCTAssertEqual(prom["spoold_multipart_discarded_bytes_total"], Double(thrownAway))
    }

    // MARK: Part 4: completions in doubt, aborts owed

    /// The store completes the upload but its answer never arrives (the connection drops): the
    /// daemon asks (ListParts: NoSuchUpload; HEAD: the object these parts make) and counts the
    /// item uploaded. Before, a completion without an answer left the item to be retried and
    /// sent again whole, or parked in failed/ while its object sat complete in the bucket.
    func testCompletionAnswerLost_storeCompleted_isCheckedAndUploaded() throws {
        try forEachTransport { _ in
            let server = try RcloneS3Server.start(self)
            let proxy = try S3FaultProxy(self, upstreamPort: server.port)
            proxy.setFault { method, target in
                method == "POST" && target.contains("uploadId=") ? .dropAnswer : nil
            }
            let spool = try TestSpool(self)
            let blob = payload((10 << 20) + 7, seed: 33)
            try spool.drop("done.bin", blob)
            let metrics = spool.root + "/metrics.prom"
            let drained = try SpooldProcess.run(
                arguments("drain", spool, proxy, ["--metrics-file", metrics]), environment: environment(spool.root), timeout: 60)
            let trace = proxy.log.joined(separator: "\n")

            XCTAssertEqual(drained.exitCode, 0, "\(drained.stderr)\n\(trace)")
            XCTAssertTrue(server.object("bucket", "k/done.bin") == Data(blob), "the object differs")
            XCTAssertEqual(spool.files(in: "failed"), [])
            XCTAssertEqual(spool.itemFiles, [])
            XCTAssertEqual(proxy.log.filter { $0.hasPrefix("PUT") }.count, 3, "nothing sent again:\n\(trace)")
            XCTAssertEqual(proxy.log.filter { $0.hasPrefix("POST") && $0.contains("?uploads=") }.count, 1, "no new upload:\n\(trace)")
            XCTAssertTrue(proxy.log.contains { $0.hasPrefix("HEAD /bucket/k/done.bin -> 200") }, trace)
            XCTAssertTrue(drained.stderr.contains("CompleteMultipartUpload ended without a clear answer"), drained.stderr)
            XCTAssertTrue(drained.stderr.contains("HEAD finds the object it makes"), drained.stderr)
            XCTAssertEqual(try PromFile(metrics)["spoold_multipart_completion_checks_total{decision=\"completed\"}"], 1)
        }
    }

    /// An item that fails for good owes its upload's abort; the store answers 503: sent again
    /// and again, and still owed when the daemon stops (`status` and `check` show it); the next
    /// start sends it and the store confirms.
    func testAbortAnswered503_isRetried_owedAcrossStops_andShown() throws {
        try forEachTransport { _ in
            let server = try RcloneS3Server.start(self)
            let proxy = try S3FaultProxy(self, upstreamPort: server.port)
            proxy.setFault { method, target in
                if method == "DELETE" { return .answer(status: 503, body: "<Error><Code>ServiceUnavailable</Code><Message>busy</Message></Error>") }
                if method == "PUT", target.contains("partNumber=2&") {
                    return .answer(status: 400, body: "<Error><Code>InvalidArgument</Code><Message>no</Message></Error>")
                }
                return nil
            }
            let spool = try TestSpool(self)
            try spool.drop("bad.bin", payload((10 << 20) + 7, seed: 34))
            let env = environment(spool.root)
            let daemon = try SpooldProcess(arguments("run", spool, proxy, ["--max-attempts", "1"]), environment: env)
            addTeardownBlock { daemon.signal(SIGKILL) }
            let faulted = { proxy.log.filter { $0.hasPrefix("DELETE") && $0.hasSuffix("-> faulted 503") }.count }
            XCTAssertTrue(waitUntil(timeout: 60) { faulted() >= 3 }, "the abort is sent again after each 503:\n\(daemon.readErr())")
            daemon.signal(SIGTERM)
            let stopped = try daemon.wait(timeout: 30)
            XCTAssertEqual(spool.files(in: "failed").filter { $0.hasSuffix(".json") }.count, 1, stopped.stderr)
            XCTAssertTrue(stopped.stderr.contains("AbortMultipartUpload of upload "), stopped.stderr)
            XCTAssertEqual(spool.files(in: "parts"), ["aborts.log"], "the item's part log is gone; its abort is recorded")

            let status = try SpooldProcess.run(["status", "--spool", spool.path])
            XCTAssertTrue(status.stdout.contains("aborts   1 S3 multipart upload(s) given up and still to abort"), status.stdout)
            let statusJSON = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(statusJSON.stdout.utf8)) as? [String: Any])
            XCTAssertEqual((object["aborts"] as? [String: Any])?["count"] as? Int, 1)
            let check = try SpooldProcess.run(["check", "--spool", spool.path])
            XCTAssertEqual(check.exitCode, 1, check.stdout)
            XCTAssertTrue(check.stdout.contains("abort: multipart upload "), check.stdout)
            XCTAssertTrue(
                check.stdout.hasSuffix("1 problem(s); 1 multipart upload(s) to abort, which the daemon does when it runs\n"),
                "offers only what will work (--repair does not abort): \(check.stdout)")

            proxy.setFault(nil)
            let again = try SpooldProcess.run(arguments("drain", spool, proxy), environment: env, timeout: 60)
            XCTAssertTrue(again.stderr.contains("aborted multipart upload "), again.stderr)
            XCTAssertTrue(proxy.log.contains { $0.hasPrefix("DELETE") && ($0.hasSuffix("-> 204") || $0.hasSuffix("-> 200")) }, proxy.log.joined(separator: "\n"))
            let after = try SpooldProcess.run(["status", "--spool", spool.path])
            XCTAssertFalse(after.stdout.contains("aborts "), after.stdout)
            let clean = try SpooldProcess.run(["check", "--spool", spool.path])
            XCTAssertEqual(clean.exitCode, 0, clean.stdout)
        }
    }

    private func recordedParts(_ spool: TestSpool) -> [Int] {
        guard let name = spool.files(in: "parts").first(where: { $0 != "aborts.log" }),
              let bytes = FileManager.default.contents(atPath: spool.path + "/parts/" + name),
              let state = PartLogCodec.decode(Array(bytes)).state
        else { return [] }
        return state.parts.keys.sorted()
    }
}
