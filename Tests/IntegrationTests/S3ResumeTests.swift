import Foundation
import SpoolStore
import XCTest

/// Durable, resumable multipart uploads against a real S3 server (`rclone serve s3`): the part
/// log (`SPOOL/parts/<id>.log`) carries an upload across a kill -9, and a crash re-sends at most
/// the parts that were in flight. Every crash point is cut with every transport (the parts go
/// through it); the kill -9 mid-upload, `show` and `purge` read the part log above it, once.
final class S3ResumeTests: TransportTestCase {
    /// The crash points of the multipart path, each cut here (CrashTests cuts the others).
    static let table: [(CrashPoint, Int)] = [
        (.multipartAfterCreate, 1), (.multipartAfterBegin, 1), (.multipartAfterPart, 2),
        (.multipartBeforeComplete, 1), (.multipartAfterComplete, 1),
    ]
    static var crashPoints: Set<CrashPoint> { Set(table.map(\.0)) }

    /// 10 MiB and a bit in 5 MiB parts: three parts; two in flight at once.
    static let size = (10 << 20) + 7
    static let parts = 3
    static let concurrency = 2

    private func environment(_ root: String) -> [String: String] {
        [
            "HOME": root, "AWS_ACCESS_KEY_ID": RcloneS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": RcloneS3Server.secretKey,
            "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "",
            "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
        ]
    }

    /// `direct: false` adds `--no-direct`: the file is a durable item before its upload begins.
    private func drain(
        _ spool: TestSpool, _ server: RcloneS3Server, prefix: String, crashAt: String? = nil, direct: Bool = true
    ) throws -> SpooldProcess.Result {
        var env = environment(spool.root)
        if let crashAt { env["SPOOLD_CRASH_AT"] = crashAt }
        return try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "s3://bucket/\(prefix)/", "--s3-endpoint", server.endpoint, "--settle", "0",
             "--s3-part-size", "5M", "--concurrency", "\(Self.concurrency)", "--retry-base", "0.01"] + transportArguments
                + (direct ? [] : ["--no-direct"]),
            environment: env, timeout: 60)
    }

    /// UploadPart requests rclone has answered so far.
    private func partsSent(_ server: RcloneS3Server) -> Int {
        server.log.components(separatedBy: "put multipart upload").count - 1
    }

    func testTable_coversEveryMultipartCrashPoint() {
        XCTAssertEqual(Self.crashPoints, Set(CrashPoint.allCases.filter { $0.rawValue.hasPrefix("multipart.") }))
    }

    /// kill -9 at each crash point of the multipart path, then drain: the object is byte-exact,
    /// nothing is dead-lettered, no part log is left, and parts are re-sent only within the
    /// in-flight bound. After a completed upload whose success was not recorded, nothing at all:
    /// the upload is gone, every part recorded, so HEAD of the key shows the object it made
    /// (`MultipartCompletionCheck`) instead of the whole object being sent once more.
    ///
    /// The file is sent directly (the default): the crash leaves a lone blob whose part log was
    /// written but not synced, which start-up recovery makes an item that resumes.
    func testCrash_atEveryMultipartCrashPoint_thenDrain_isByteExact() throws {
        try forEachTransport { _ in
            try crashAtEveryMultipartCrashPoint_thenDrain(direct: true)
        }
    }

    /// The same on the queue's path (`--no-direct`): the file is a durable item before the upload.
    func testCrash_atEveryMultipartCrashPoint_ofAQueuedItem_thenDrain_isByteExact() throws {
        try forEachTransport { _ in
            try crashAtEveryMultipartCrashPoint_thenDrain(direct: false)
        }
    }

    private func crashAtEveryMultipartCrashPoint_thenDrain(direct: Bool) throws {
        let server = try RcloneS3Server.start(self, debugLog: true)
        for (point, count) in Self.table {
            let label = "\(point.rawValue):\(count)"
            let spool = try TestSpool(self)
            let blob = payload(Self.size, seed: UInt64(count) &+ UInt64(label.utf8.count))
            try spool.drop("big.bin", blob)
            let before = partsSent(server)

            let crashed = try drain(spool, server, prefix: point.rawValue, crashAt: label, direct: direct)
            XCTAssertEqual(crashed.signal, SIGKILL, "\(label): spoold must die at the crash point: \(crashed.stderr)")
            if direct {
                XCTAssertEqual(spool.files(in: "inflight").filter { $0.hasSuffix(".json") }, [], "\(label): a lone blob")
            }
            let drained = try drain(spool, server, prefix: point.rawValue, direct: direct)

            XCTAssertEqual(drained.exitCode, 0, "\(label): \(drained.stderr)")
            XCTAssertTrue(server.object("bucket", "\(point.rawValue)/big.bin") == Data(blob), "\(label): the object differs")
            XCTAssertEqual(spool.files(in: "failed"), [], label)
            XCTAssertEqual(spool.itemFiles, [], label)
            XCTAssertEqual(spool.files(in: "parts"), [], "\(label): the part log goes with the item")
            let sent = partsSent(server) - before
            let bound = point == .multipartAfterComplete ? Self.parts : Self.parts + Self.concurrency
            XCTAssertLessThanOrEqual(sent, bound, "\(label): parts sent \(sent)")
            XCTAssertGreaterThanOrEqual(sent, Self.parts, label)
        }
        XCTAssertEqual(server.keys("bucket").count, Self.table.count, "no part left behind as an object")
    }

    /// A kill -9 at an arbitrary moment of a multipart upload (once a part is recorded), with a torn
    /// record appended as a crash mid-append would leave it: the next drain resumes, sending only
    /// the parts the log does not hold, and `ls` showed the progress.
    func testKill9_midUpload_resumesFromTheLog() throws {
        let server = try RcloneS3Server.start(self, debugLog: true)
        let spool = try TestSpool(self)
        let parts = 5
        let blob = payload((20 << 20) + 7, seed: 99)
        try spool.drop("v.bin", blob)
        var env = environment(spool.root)
        env["SPOOLD_CRASH_AT"] = ""
        let running = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", "s3://bucket/k/", "--s3-endpoint", server.endpoint, "--settle", "0",
             "--s3-part-size", "5M", "--concurrency", "\(Self.concurrency)"] + transportArguments,
            environment: env)
        addTeardownBlock { running.signal(SIGKILL) }
        // No event reaches the test when a part is recorded: watch the log grow, bounded.
        XCTAssertTrue(waitUntil(timeout: 60) { self.recordedParts(spool) >= 1 }, running.readErr())
        running.signal(SIGKILL)
        _ = try running.wait(timeout: 10)
        let recorded = recordedParts(spool)
        // A crash mid-append leaves a torn record: ignored, and cut before the next append.
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: spool.path + "/parts/" + spool.files(in: "parts")[0]))
        log.seekToEndOfFile()
        log.write(Data("R 41 a69c5128 part 9 \"0c78ae".utf8))
        log.closeFile()
        let listing = try SpooldProcess.run(["ls", "--spool", spool.path])
        XCTAssertTrue(listing.stdout.contains("parts \(recorded)/\(parts)"), listing.stdout)

        let drained = try drain(spool, server, prefix: "k")

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertTrue(server.object("bucket", "k/v.bin") == Data(blob), "the object differs")
        XCTAssertEqual(spool.files(in: "parts"), [])
        let sent = partsSent(server)
        guard recorded < parts else { return }  // killed after the last part: nothing left to resume
        XCTAssertLessThanOrEqual(sent, parts + Self.concurrency, "re-sent beyond the parts in flight")
        XCTAssertEqual(server.log.components(separatedBy: "initiate multipart upload").count - 1, 1, "resumed, not started over")
    }

    /// `spoold show` of an item with a part log names its progress and upload (here a lone blob:
    /// cut during a direct upload); `spoold purge` aborts the upload, then removes the log.
    func testShowThenPurge_showsThePartsDone_thenAbortsTheMultipartUpload() throws {
        let server = try RcloneS3Server.start(self, debugLog: true)
        let spool = try TestSpool(self)
        try spool.drop("p.bin", payload(Self.size, seed: 5))
        let crashed = try drain(spool, server, prefix: "p", crashAt: "multipart.after-part:1")
        XCTAssertEqual(crashed.signal, SIGKILL, crashed.stderr)
        XCTAssertEqual(spool.files(in: "parts").count, 1)

        let id = try XCTUnwrap(spool.files(in: "inflight").first { $0.hasSuffix(".blob") }?.components(separatedBy: ".a").first)
        let shown = try SpooldProcess.run(["show", "--spool", spool.path, id])
        XCTAssertTrue(shown.stdout.contains("parts     1/\(Self.parts) done, 5.0 MiB each (S3 multipart upload "), shown.stdout)
        let purged = try SpooldProcess.run(["purge", "--spool", spool.path, id], environment: environment(spool.root))

        XCTAssertEqual(purged.exitCode, 0, purged.stderr)
        XCTAssertEqual(spool.partLogs, [])
        XCTAssertEqual(spool.owedAborts, [], "confirmed")
        XCTAssertTrue(server.log.contains("abort multipart upload"), server.log)
    }

    private func recordedParts(_ spool: TestSpool) -> Int {
        guard let name = spool.files(in: "parts").first,
              let text = try? String(contentsOfFile: spool.path + "/parts/" + name, encoding: .utf8)
        else { return 0 }
        return text.components(separatedBy: " part ").count - 1
    }
}
