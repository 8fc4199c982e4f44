import Foundation
import UploadReceiver
import XCTest

/// `spoold drain` against our loopback receiver: the issue's end-to-end promises.
final class DrainTests: XCTestCase {
    private func startReceiver(_ script: ResponseScript = .always(201)) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script)
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    private func drain(_ spool: TestSpool, _ receiver: UploadReceiver, _ extra: [String] = []) throws -> SpooldProcess.Result {
        try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "0.05", "--settle", "0"] + extra)
    }

    func testDrain_variedSizesAndNames_arriveByteForByteExactlyOnce() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let files: [(String, [UInt8])] = [
            ("empty.bin", []), ("one byte", [0x42]), ("photo 1.jpg", payload(70_000, seed: 1)),
            ("naïve résumé ünïcode.txt", payload(1234, seed: 2)), ("100%;done.csv", payload(4096, seed: 3)),
            ("big.dat", payload(5 << 20, seed: 4)), ("a;b=c&d?e#f.txt", payload(10, seed: 5)),
        ]
        for (name, bytes) in files { try spool.drop(name, bytes) }

        let result = try drain(spool, receiver)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let requests = receiver.requests
        XCTAssertEqual(requests.count, files.count, "each item is sent exactly once")
        var byName: [String: [UInt8]] = [:]
        for request in requests {
            XCTAssertEqual(request.method, "PUT")
            XCTAssertTrue(request.target.hasPrefix("/up/"), request.target)
            byName[percentDecode(String(request.target.dropFirst(4)))] = request.body
        }
        for (name, bytes) in files {
            XCTAssertEqual(byName[name]?.count, bytes.count, name)
            XCTAssertTrue(byName[name] == bytes, "body of \(name) differs")
        }
        XCTAssertEqual(Set(requests.compactMap { $0.header("Idempotency-Key") }).count, files.count)
        XCTAssertEqual(spool.itemFiles, [], "the spool is empty after success")
        XCTAssertEqual(spool.files(in: "incoming"), [])
    }

    func testDrain_serverAlways500_threeRequestsOneKey_itemParkedAsA3() throws {
        let receiver = try startReceiver(.always(500))
        let spool = try TestSpool(self)
        try spool.drop("report.json", Array("{\"x\":1}".utf8))

        let result = try drain(spool, receiver)

        XCTAssertEqual(result.exitCode, 1, "drain exits 1 when items ended in failed/")
        XCTAssertEqual(receiver.requests.count, 3)
        let keys = Set(receiver.requests.compactMap { $0.header("Idempotency-Key") })
        XCTAssertEqual(keys.count, 1)
        let id = try XCTUnwrap(keys.first)
        XCTAssertEqual(spool.files(in: "failed"), ["\(id).a3.blob", "\(id).a3.json"])
        XCTAssertEqual(spool.files(in: "pending"), [])
        let json = try spool.json("failed/\(id).a3.json")
        let attempts = try XCTUnwrap(json["attempts"] as? [[String: Any]])
        XCTAssertEqual(attempts.count, 3)
        XCTAssertEqual(attempts.map { $0["httpStatus"] as? Int }, [500, 500, 500])
        XCTAssertEqual(json["originalName"] as? String, "report.json")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: spool.path + "/failed/\(id).a3.blob")), Data("{\"x\":1}".utf8))
    }

    func testDrain_failsTwiceThenAccepts_uploadedOnAttemptThree() throws {
        let receiver = try startReceiver(.perKey([.status(503), .status(500)], then: .status(201)))
        let spool = try TestSpool(self)
        try spool.drop("flaky.txt", payload(100, seed: 9))

        let result = try drain(spool, receiver)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.count, 3)
        XCTAssertEqual(Set(receiver.requests.compactMap { $0.header("Idempotency-Key") }).count, 1)
        XCTAssertEqual(receiver.requests.last?.body, payload(100, seed: 9))
        XCTAssertTrue(result.stderr.contains("attempt 3"), result.stderr)
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testRetryAll_bringsFailedBackAsA0_andALaterDrainUploadsIt() throws {
        let receiver = try startReceiver(.always(500))
        let spool = try TestSpool(self)
        try spool.drop("later.txt", payload(33, seed: 7))
        XCTAssertEqual(try drain(spool, receiver).exitCode, 1)
        let id = try XCTUnwrap(receiver.requests.first?.header("Idempotency-Key"))

        let retry = try SpooldProcess.run(["retry", "--spool", spool.path, "--all"])
        XCTAssertEqual(retry.exitCode, 0, retry.stderr)
        XCTAssertEqual(retry.lines, [id])
        XCTAssertEqual(spool.files(in: "pending"), ["\(id).a0.blob", "\(id).a0.json"])
        XCTAssertEqual(spool.files(in: "failed"), [])

        receiver.setScript(.always(201))
        let second = try drain(spool, receiver)
        XCTAssertEqual(second.exitCode, 0, second.stderr)
        XCTAssertEqual(receiver.requests.count, 4)
        XCTAssertEqual(receiver.requests.last?.header("Idempotency-Key"), id, "the key survives a retry")
        XCTAssertEqual(spool.itemFiles, [])
    }

    func testDrain_finalClientError_oneRequestStraightToFailed() throws {
        let receiver = try startReceiver(.always(400))
        let spool = try TestSpool(self)
        try spool.drop("bad.txt", [1, 2, 3])
        let result = try drain(spool, receiver)
        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(receiver.requests.count, 1)
        XCTAssertEqual(spool.files(in: "failed").count, 2)
        XCTAssertTrue(spool.files(in: "failed").allSatisfy { $0.contains(".a1.") })
    }

    func testDrain_hostileEntriesInIncoming_areLeftAloneAndNeverRead() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let secret = spool.root + "/secret.txt"
        try Data("TOP SECRET".utf8).write(to: URL(fileURLWithPath: secret))
        try FileManager.default.createSymbolicLink(atPath: spool.incoming + "/link-to-secret", withDestinationPath: secret)
        XCTAssertEqual(mkfifo(spool.incoming + "/a-fifo", 0o644), 0)
        try FileManager.default.createDirectory(atPath: spool.incoming + "/a-folder", withIntermediateDirectories: false)
        try spool.drop("good.txt", [7])

        let result = try drain(spool, receiver)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.count, 1, "only the regular file is uploaded")
        XCTAssertEqual(receiver.requests.first?.body, [7])
        XCTAssertFalse(receiver.requests.contains { $0.body == Array("TOP SECRET".utf8) })
        XCTAssertEqual(spool.files(in: "incoming"), ["a-fifo", "a-folder", "link-to-secret"], "left where they were")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: secret)), Data("TOP SECRET".utf8))
        // A folder is walked (see IncomingFolderTests), not reported.
        for name in ["a-fifo", "link-to-secret"] {
            XCTAssertTrue(result.stderr.contains("incoming/\(name)"), "\(name) is reported: \(result.stderr)")
        }
    }

    func testDrain_sidecarHeadersGoOnTheWire_andAMalformedSidecarParksTheItem() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        try Data(#"{"contentType":"image/jpeg","headers":{"X-Camera":"trap-7"},"fields":{"caption":"fox"}}"#.utf8)
            .write(to: URL(fileURLWithPath: spool.incoming + "/fox.jpg.meta.json"))
        try spool.drop("fox.jpg", [0xff, 0xd8])
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: spool.incoming + "/broken.txt.meta.json"))
        try spool.drop("broken.txt", [1])

        let result = try drain(spool, receiver)

        XCTAssertEqual(result.exitCode, 1, "the malformed sidecar's item ends in failed/")
        XCTAssertEqual(receiver.requests.count, 1)
        let request = try XCTUnwrap(receiver.requests.first)
        XCTAssertEqual(request.header("X-Camera"), "trap-7")
        XCTAssertEqual(request.header("Content-Type"), "image/jpeg")
        let failed = spool.files(in: "failed")
        XCTAssertEqual(failed.count, 2)
        let json = try spool.json("failed/" + failed.first { $0.hasSuffix(".json") }!)
        XCTAssertTrue((json["failureReason"] as? String ?? "").contains("broken.txt.meta.json"), "\(json)")
        XCTAssertEqual(json["failureCode"] as? String, "sidecar")
        XCTAssertEqual(spool.files(in: "incoming"), [], "sidecars are consumed with their file")
    }

    func testDrain_usageErrors_exitTwoWithAClearMessage() throws {
        let spool = try TestSpool(self)
        let noURL = try SpooldProcess.run(["drain", "--spool", spool.path])
        XCTAssertEqual(noURL.exitCode, 2)
        XCTAssertTrue(noURL.stderr.contains("--url"), noURL.stderr)
        let typo = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/", "--concurency", "3"])
        XCTAssertEqual(typo.exitCode, 2)
        XCTAssertTrue(typo.stderr.contains("--concurrency"), "suggests the right option: \(typo.stderr)")
        let badURL = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "ftp://x/"])
        XCTAssertEqual(badURL.exitCode, 2)
        let placeholder = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/{nmae}/"])
        XCTAssertEqual(placeholder.exitCode, 2)
        XCTAssertTrue(placeholder.stderr.contains("unknown placeholder {nmae} (known: {name} {id} {host} {date} {year} {month} {day} {hour})"),
                      placeholder.stderr)
    }

    /// `{year}` ... `{hour}` in --url are each item's creation time as its json records it (UTC):
    /// one item enqueued now, one as if spooled during a long outage (its json says 2020-02-29
    /// 13:45), so its URL cannot come from the clock at upload.
    func testDrain_dateParts_areEachItemsRecordedCreationTime() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        for name in ["now.txt", "old one.txt"] { try Data(name.utf8).write(to: URL(fileURLWithPath: spool.root + "/" + name)) }
        let ids = try SpooldProcess.run(["enqueue", "--spool", spool.path, spool.root + "/now.txt", spool.root + "/old one.txt"]).lines
        XCTAssertEqual(ids.count, 2)
        let createdNow = try XCTUnwrap(spool.json("pending/\(ids[0]).a0.json")["createdAt"] as? String)
        try spool.setCreatedAt(ids[1], "2020-02-29T13:45:00.000Z")

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/{year}/{month}/{day}/h{hour}/"])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let (date, hour) = (createdNow.prefix(10).replacingOccurrences(of: "-", with: "/"), createdNow.dropFirst(11).prefix(2))
        XCTAssertEqual(receiver.requests.map(\.target).sorted(), ["/up/2020/02/29/h13/old%20one.txt", "/up/\(date)/h\(hour)/now.txt"])
    }

    /// Runs spoold in a UTS namespace of its own under `hostName` (root only: `unshare -u`).
    private func asHost(_ hostName: String) throws -> [String] {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-u", "python3", "-c", "import socket; socket.sethostname('x')"]
        probe.standardError = FileHandle.nullDevice
        do { try probe.run() } catch { throw XCTSkip("unshare(1) is not installed") }
        probe.waitUntilExit()
        try XCTSkipIf(probe.terminationStatus != 0, "cannot set a host name in a UTS namespace of its own (needs root)")
        return ["/usr/bin/unshare", "-u", "python3", "-c",
                "import os, socket, sys; socket.sethostname(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])", hostName]
    }

    /// `{host}` is the machine's host name, read at start and said in the start-up line: one
    /// --url for a whole fleet keeps each host's uploads apart (two hosts, same file name). The
    /// name is still appended. A machine without a host name refuses `{host}`.
    func testDrain_hostPlaceholder_keepsEachHostsUploadsApart_emptyHostNameRefused() throws {
        let receiver = try startReceiver()
        let url = receiver.baseURL + "/fleet/{host}/"
        for host in ["cam-07", "cam 8"] {
            let spool = try TestSpool(self)
            try spool.drop("fox.jpg", Array(host.utf8))
            let result = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", url, "--settle", "0"], wrapper: try asHost(host))
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertTrue(result.stderr.contains("/fleet/{host}/ ({host}: \(host))"), result.stderr)
        }
        XCTAssertEqual(receiver.requests.map(\.target).sorted(), ["/fleet/cam%208/fox.jpg", "/fleet/cam-07/fox.jpg"])
        XCTAssertEqual(receiver.requests.map { String(decoding: $0.body, as: UTF8.self) }.sorted(), ["cam 8", "cam-07"])

        let spool = try TestSpool(self)
        let nameless = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", url], wrapper: try asHost(""))
        XCTAssertEqual(nameless.exitCode, 2, nameless.stderr)
        XCTAssertTrue(nameless.stderr.contains("--url uses {host}, but this machine's host name is empty"), nameless.stderr)
    }

    func testDrain_emptySpool_exitsZeroAtOnce() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let result = try drain(spool, receiver)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.count, 0)
        for folder in ["incoming", "pending", "inflight", "failed", "tmp"] {
            var isDir: ObjCBool = false
            XCTAssertTrue(FileManager.default.fileExists(atPath: spool.path + "/" + folder, isDirectory: &isDir) && isDir.boolValue)
        }
    }

    func testRequests_carryTheVersionThatSpooldVersionPrints_inTheirUserAgent() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        try spool.drop("ua.txt", [1])
        let version = try SpooldProcess.run(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(version.hasPrefix("spoold "), version)

        XCTAssertEqual(try drain(spool, receiver).exitCode, 0)

        XCTAssertEqual(receiver.requests.first?.header("User-Agent"), "spoold/" + version.dropFirst("spoold ".count))
    }

    // MARK: - Stopped before the end (exit 5)

    func testDrain_stoppedBySIGTERMWithItemsLeft_exitsFive_andSaysWhatRemains() throws {
        let receiver = try startReceiver(.always(503))
        let spool = try TestSpool(self)
        let hourAgo = Date(timeIntervalSinceNow: -3600)
        for name in ["a.txt", "b.txt"] {
            try spool.drop(name, [1, 2])
            try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: spool.incoming + "/" + name)
        }
        try spool.drop("held.txt", [3])  // found by the start-up scan, still open for writing
        let writer = open(spool.incoming + "/held.txt", O_WRONLY | O_APPEND)
        XCTAssertGreaterThanOrEqual(writer, 0)
        defer { close(writer) }
        let drain = try SpooldProcess(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "3600", "--settle", "3600"])
        addTeardownBlock { drain.signal(SIGKILL) }
        XCTAssertTrue(receiver.waitForRequests(count: 2, timeout: 30), drain.readErr())

        drain.signal(SIGTERM)
        let result = try drain.wait(timeout: 30)

        XCTAssertEqual(result.exitCode, 5, "stopped with items left is not success: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("drain stopped by a signal before everything was uploaded: 2 pending, 0 in flight, 1 in incoming/"),
                      result.stderr)
        XCTAssertFalse(result.stderr.contains("drain finished"), result.stderr)
        XCTAssertEqual(spool.files(in: "pending").filter { $0.hasSuffix(".a1.json") }.count, 2, "nothing is lost")
        XCTAssertEqual(spool.files(in: "incoming"), ["held.txt"])
    }

    func testDrain_maxTime_cancelsAnUploadThatOutlivesTheGrace_andHandsItsAttemptBack() throws {
        let receiver = try startReceiver(.always(.faulted(.neverAnswer)))
        let spool = try TestSpool(self)
        try spool.drop("stuck.bin", payload(1000, seed: 8))
        let started = Date()

        let result = try drain(spool, receiver, ["--max-time", "1", "--timeout", "60"])

        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(result.exitCode, 5, result.stderr)
        XCTAssertEqual(receiver.requests.count, 1)
        XCTAssertGreaterThanOrEqual(elapsed, 2.0, "the upload in flight got its grace (1 s with --max-time 1)")
        XCTAssertLessThan(elapsed, 15.0, "the bound holds although the server never answers")
        XCTAssertTrue(result.stderr.contains("--max-time 1.0 s reached: taking no new work; 1 upload(s) in flight get 1.0 s to finish"),
                      result.stderr)
        XCTAssertTrue(result.stderr.contains("--max-time grace over: cancelling 1 upload(s)"), result.stderr)
        XCTAssertTrue(result.stderr.contains("at --max-time before everything was uploaded: 1 pending, 0 in flight, 0 in incoming/"),
                      result.stderr)
        let pending = spool.files(in: "pending")
        XCTAssertEqual(pending.count, 2)
        XCTAssertTrue(pending.allSatisfy { $0.contains(".a0.") }, "the cancelled attempt did not count: \(pending)")
    }
}
