import Foundation
import SpoolCore
import SpoolStore
import XCTest

/// tus 1.0 uploads (`--url tus+http://...`) with the built binary against a real tus server on
/// 127.0.0.1 (tuspyserver run by uvicorn, `TusServer`):
/// - items arrive byte-exact under their names, with their metadata, through either transport;
/// - the checksum extension covers every request that carries bytes, when the server offers it;
/// - a file through three kill -9 sends at most the file plus one chunk per kill, counted at a
///   relay in front of the server (`S3FaultProxy`), and each restart resumes from the server's
///   offset;
/// - an upload the server lost (404 for the recorded URL) starts over, said and counted;
/// - every tus crash point, then a drain: byte-exact, nothing created twice once recorded;
/// - `purge` terminates an upload when the server offers termination, and owes nothing when it does
///   not; it sends the operator's headers to a server that wants them; the daemon terminates the
///   upload of an item that went to failed/.
final class TusTests: TransportTestCase {
    /// The tus crash points, each cut here (CrashTests cuts the spool's, S3ResumeTests the multipart ones).
    static let table: [(CrashPoint, Int)] = [(.tusAfterCreate, 1), (.tusAfterRecord, 1), (.tusAfterPatch, 1), (.tusAfterPatch, 3)]
    static var crashPoints: Set<CrashPoint> { Set(table.map(\.0)) }

    private func arguments(_ command: String, _ spool: TestSpool, _ endpoint: String, _ more: [String] = []) -> [String] {
        [command, "--spool", spool.path, "--url", "tus+" + endpoint, "--settle", "0", "--retry-base", "0.05"] + transportArguments + more
    }

    /// The environment of a run that must not die at a crash point a parent test set.
    private let unarmed = ["SPOOLD_CRASH_AT": ""]

    func testTable_coversEveryTusCrashPoint() {
        XCTAssertEqual(Self.crashPoints, Set(CrashPoint.allCases.filter { $0.rawValue.hasPrefix("tus.") }))
    }

    // MARK: Arriving

    /// A file in a subfolder with a comma and a space in its name, a text file and an empty one:
    /// each is one upload holding exactly its bytes, its `filename` the path below incoming/ and
    /// its `filetype` its content type; nothing is left in the spool.
    func testItems_arriveByteExact_underTheirNames_withTheirTypes() throws {
        try forEachTransport { _ in
            let server = try TusServer.start(self)
            let spool = try TestSpool(self)
            let big = payload((5 << 20) + 7, seed: 29)
            try FileManager.default.createDirectory(atPath: spool.incoming + "/cam 7", withIntermediateDirectories: true)
            try spool.drop("cam 7/fox,1.bin", big)
            try spool.drop("note.txt", Array("hello tus\n".utf8))
            try spool.drop("empty.dat", [])

            // One at a time: the second and third items start after the first ended, and ask nothing.
            let drained = try SpooldProcess.run(
                arguments("drain", spool, server.endpoint, ["--tus-chunk-size", "1M", "--concurrency", "1"]), environment: unarmed)

            XCTAssertEqual(drained.exitCode, 0, drained.stderr)
            let uploads = Dictionary(server.completeUploads.map { ($0.metadata["filename"] ?? "?", $0) }) { a, _ in a }
            XCTAssertEqual(Set(uploads.keys), ["cam 7/fox,1.bin", "note.txt", "empty.dat"], server.output)
            XCTAssertTrue(uploads["cam 7/fox,1.bin"]?.data == Data(big), "the bytes differ")
            XCTAssertEqual(uploads["cam 7/fox,1.bin"]?.metadata["filetype"], "application/octet-stream")
            XCTAssertEqual(uploads["note.txt"]?.data, Data("hello tus\n".utf8))
            XCTAssertEqual(uploads["note.txt"]?.metadata["filetype"], "text/plain; charset=utf-8")
            XCTAssertEqual(uploads["empty.dat"]?.size, 0)
            XCTAssertEqual(server.uploads.count, 3, "one upload per item")
            XCTAssertEqual(spool.itemFiles, [])
            XCTAssertEqual(spool.partLogs, [], "a log goes with its item")
            XCTAssertTrue(drained.stderr.contains("tus server at \(server.endpoint) offers: "), drained.stderr)
            XCTAssertEqual(drained.stderr.components(separatedBy: "offers: ").count - 1, 1, "OPTIONS once per daemon start")
        }
    }

    /// A server that offers the checksum extension (and not creation-with-upload): every PATCH
    /// carries an Upload-Checksum the server checks against what arrived (sha256, the stronger).
    func testChecksumExtension_coversEveryPatch() throws {
        let server = try TusServer.start(self, checksum: true, extensions: ["creation", "termination"])
        let spool = try TestSpool(self)
        let blob = payload((3 << 20) + 5, seed: 30)
        try spool.drop("sum.bin", blob)

        let drained = try SpooldProcess.run(arguments("drain", spool, server.endpoint, ["--tus-chunk-size", "1M"]), environment: unarmed)

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertTrue(server.completeUploads.first?.data == Data(blob), "the bytes differ")
        XCTAssertEqual(server.output.components(separatedBy: "checksum checked sha256 ").count - 1, 4, "four PATCHes, each checked:\n\(server.output)")
        XCTAssertFalse(server.output.contains("mismatch"), server.output)
    }

    // MARK: Resuming

    /// Issue 29's run scaled down by four with its ratios kept: there a 200 MiB file in 16 MiB
    /// chunks (the default), killed each time 50 MiB more went out; here 50 MiB in 4 MiB chunks,
    /// killed each time 12.5 MiB more went out (a quarter of the file, over three chunks, more
    /// than the slack of the bound). SIGKILLed three times, restarted each time, then drained:
    /// byte-exact, and the bytes sent stay within the file plus one chunk per kill, request heads
    /// aside. Each restart says it resumed from the server's offset; none starts over.
    func testKilledThreeTimes_sendsAtMostTheFilePlusOneChunkPerKill() throws {
        try forEachTransport { _ in
            let server = try TusServer.start(self)
            let proxy = try S3FaultProxy(self, upstreamPort: server.port)
            let endpoint = proxy.endpoint + "/files/"
            let spool = try TestSpool(self)
            let size = 50 << 20
            let chunk = 4 << 20
            let step = Int64(size / 4)
            let blob = payload(size, seed: 31)
            try spool.drop("big.bin", blob)
            var logs: [String] = []
            var story: [String] = []
            for kill in 1...3 {
                // Held at the mark, so the kill lands there however loaded the machine.
                proxy.hold(at: proxy.bytesSent + step)
                let daemon = try SpooldProcess(arguments("run", spool, endpoint, ["--tus-chunk-size", "4M"]), environment: unarmed)
                let reached = proxy.waitUntilHeld(timeout: 120)
                daemon.signal(SIGKILL)
                let ended = try daemon.wait(timeout: 10)
                proxy.release()
                XCTAssertTrue(reached, "kill \(kill): \(step) B did not go out: \(ended.stderr)")
                logs.append(ended.stderr)
                story.append("kill \(kill) at \(proxy.bytesSent) B sent; the server holds \(server.uploads.map(\.offset))")
            }
            let drained = try SpooldProcess.run(arguments("drain", spool, endpoint, ["--tus-chunk-size", "4M"]), environment: unarmed, timeout: 120)
            let trace = story.joined(separator: "\n") + "\nrequests: " + proxy.log.joined(separator: "\n")

            XCTAssertEqual(drained.exitCode, 0, drained.stderr)
            XCTAssertEqual(server.completeUploads.count, 1, trace)
            XCTAssertTrue(server.completeUploads.first?.data == Data(blob), "the bytes differ")
            XCTAssertEqual(server.uploads.count, 1, "resumed, never created again:\n\(trace)")
            let bound = Int64(size) + 3 * Int64(chunk) + (256 << 10)
            XCTAssertLessThanOrEqual(proxy.bytesSent, bound, "sent beyond the file plus a chunk per kill:\n\(trace)")
            let said = (logs.dropFirst() + [drained.stderr]).joined()
            XCTAssertEqual(said.components(separatedBy: "resuming the tus upload of ").count - 1, 3, "each restart resumes:\n\(said)")
            XCTAssertFalse((logs + [drained.stderr]).joined().contains("starting the tus upload"), "none started over:\n\(trace)")
            XCTAssertEqual(spool.partLogs, [])
        }
    }

    /// The server lost the upload while spoold was stopped: HEAD of the recorded URL answers 404,
    /// and the upload starts over, said at info with the reason and the bytes thrown away, and
    /// counted in the start-over metrics.
    func testUploadTheServerLost_startsOver_saidAndCounted() throws {
        let server = try TusServer.start(self)
        let spool = try TestSpool(self)
        let blob = payload(24 << 20, seed: 32)
        try spool.drop("lost.bin", blob)
        let daemon = try SpooldProcess(
            arguments("run", spool, server.endpoint, ["--tus-chunk-size", "1M", "--limit-rate", "8M"]), environment: unarmed)
        addTeardownBlock { daemon.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 60) { self.notedOffset(spool) >= 2 << 20 }, daemon.readErr())
        daemon.signal(SIGKILL)
        _ = try daemon.wait(timeout: 10)
        let lost = try XCTUnwrap(server.uploads.first)
        try server.lose(lost.id)
        let metrics = spool.root + "/metrics.prom"

        let drained = try SpooldProcess.run(
            arguments("drain", spool, server.endpoint, ["--tus-chunk-size", "1M", "--metrics-file", metrics]), environment: unarmed)

        XCTAssertEqual(drained.exitCode, 0, drained.stderr)
        XCTAssertTrue(server.completeUploads.first?.data == Data(blob), "the bytes differ")
        XCTAssertTrue(
            drained.stderr.contains("(upload_gone): HEAD of its upload URL answered 404; throwing away "), drained.stderr)
        XCTAssertTrue(drained.stderr.contains("the server held of upload \(server.endpoint)\(lost.id)"), drained.stderr)
        let prom = try PromFile(metrics)
        XCTAssertEqual(prom["spoold_multipart_start_overs_total{reason=\"upload_gone\"}"], 1)
        XCTAssertGreaterThanOrEqual(prom["spoold_multipart_discarded_bytes_total"] ?? 0, Double(2 << 20))
        XCTAssertEqual(spool.owedAborts, [], "a lost upload is not terminated")
    }

    /// kill -9 at each tus crash point, then drain: byte-exact, no log left, and nothing created
    /// twice once its URL was recorded (a kill before that leaves one orphan the server expires).
    /// After the last PATCH answered, nothing is sent again: HEAD says the server holds it all.
    func testCrash_atEveryTusCrashPoint_thenDrain_isByteExact() throws {
        let server = try TusServer.start(self)
        for (point, count) in Self.table {
            let label = "\(point.rawValue):\(count)"
            let spool = try TestSpool(self)
            let blob = payload((3 << 20) + 7, seed: UInt64(count) &+ UInt64(label.utf8.count))
            try spool.drop("\(point.rawValue)-\(count).bin", blob)
            let before = server.uploads.count

            let crashed = try SpooldProcess.run(
                arguments("drain", spool, server.endpoint, ["--tus-chunk-size", "1M"]), environment: ["SPOOLD_CRASH_AT": label])
            XCTAssertEqual(crashed.signal, SIGKILL, "\(label): spoold must die at the crash point: \(crashed.stderr)")
            let drained = try SpooldProcess.run(arguments("drain", spool, server.endpoint, ["--tus-chunk-size", "1M"]), environment: unarmed)

            XCTAssertEqual(drained.exitCode, 0, "\(label): \(drained.stderr)")
            let mine = server.uploads.dropFirst(before)
            XCTAssertEqual(mine.filter { $0.offset == $0.size }.count, 1, label)
            XCTAssertTrue(mine.first { $0.offset == $0.size }?.data == Data(blob), "\(label): the bytes differ")
            XCTAssertEqual(mine.count, point == .tusAfterCreate ? 2 : 1, "\(label): uploads created")
            XCTAssertEqual(spool.itemFiles, [], label)
            XCTAssertEqual(spool.partLogs, [], label)
            if count == 3 {
                XCTAssertTrue(drained.stderr.contains("the server holds 3.0 MiB of 3.0 MiB; sending 0 B"), "\(label): \(drained.stderr)")
            }
        }
    }

    // MARK: Termination

    /// `show` names the upload an item's log records; `purge` terminates it (DELETE) when the
    /// server offers termination, and owes nothing after; a server without termination is sent
    /// nothing, and nothing stays owed either.
    func testPurge_terminatesTheUpload_whenTheServerOffersIt() throws {
        for offers in [true, false] {
            let server = try TusServer.start(self, extensions: offers ? nil : ["creation", "creation-with-upload"])
            let spool = try TestSpool(self)
            try spool.drop("p.bin", payload((3 << 20) + 7, seed: 33))
            let crashed = try SpooldProcess.run(
                arguments("drain", spool, server.endpoint, ["--tus-chunk-size", "1M"]), environment: ["SPOOLD_CRASH_AT": "tus.after-patch:1"])
            XCTAssertEqual(crashed.signal, SIGKILL, crashed.stderr)
            let id = try XCTUnwrap(spool.files(in: "inflight").first { $0.hasSuffix(".blob") }?.components(separatedBy: ".a").first)
            let upload = try XCTUnwrap(server.uploads.first)
            let shown = try SpooldProcess.run(["show", "--spool", spool.path, id])
            XCTAssertTrue(shown.stdout.contains("tus       2.0 MiB of 3.0 MiB acknowledged when last noted (upload \(server.endpoint)\(upload.id))"), shown.stdout)

            let purged = try SpooldProcess.run(["purge", "--spool", spool.path, id] + transportArguments)

            XCTAssertEqual(purged.exitCode, 0, purged.stderr)
            XCTAssertEqual(spool.partLogs, [])
            XCTAssertEqual(spool.owedAborts, [], "confirmed (offers termination: \(offers)): \(purged.stderr)")
            XCTAssertEqual(server.uploads.count, offers ? 0 : 1, "terminated only where offered")
        }
    }

    /// A server behind a token: `purge` sends the operator's headers (`--header-env`) with its
    /// OPTIONS and DELETE, as the daemon does. Without them the server refuses both, and the
    /// termination stays owed for the daemon, which has them.
    func testPurge_sendsTheOperatorsHeaders_toAServerThatWantsThem() throws {
        let token = "Authorization: Bearer purge-secret-7"
        let server = try TusServer.start(self, requiredHeader: token)
        func crashedUpload(_ spool: TestSpool) throws -> String {
            try spool.drop("p.bin", payload((3 << 20) + 7, seed: 35))
            let crashed = try SpooldProcess.run(
                arguments("drain", spool, server.endpoint, ["--tus-chunk-size", "1M", "--header-env", "TUS_TOKEN"]),
                environment: ["SPOOLD_CRASH_AT": "tus.after-patch:1", "TUS_TOKEN": token])
            XCTAssertEqual(crashed.signal, SIGKILL, crashed.stderr)
            return try XCTUnwrap(spool.files(in: "inflight").first { $0.hasSuffix(".blob") }?.components(separatedBy: ".a").first)
        }
        let (bare, withHeader) = (try TestSpool(self), try TestSpool(self))
        let (bareID, withHeaderID) = (try crashedUpload(bare), try crashedUpload(withHeader))
        XCTAssertEqual(server.uploads.count, 2, server.output)

        let refused = try SpooldProcess.run(["purge", "--spool", bare.path, bareID] + transportArguments)
        XCTAssertEqual(bare.partLogs, [], "purged all the same: \(refused.stderr)")
        XCTAssertTrue(refused.stderr.contains("did not confirm terminating its upload"), refused.stderr)
        XCTAssertEqual(bare.owedAborts.count, 1, "owed, for the daemon")

        let purged = try SpooldProcess.run(
            ["purge", "--spool", withHeader.path, withHeaderID, "--header-env", "TUS_TOKEN"] + transportArguments,
            environment: ["TUS_TOKEN": token])
        XCTAssertEqual(purged.exitCode, 0, purged.stderr)
        XCTAssertEqual(withHeader.owedAborts, [], purged.stderr)
        XCTAssertEqual(server.uploads.count, 1, "the upload purged with the header is gone, the other one is not: \(server.output)")
        XCTAssertFalse((purged.stdout + purged.stderr + refused.stderr).contains("purge-secret-7"), "the secret is never printed")
    }

    /// An item the server refuses for good mid-upload (a 403 to a PATCH) goes to failed/, and the
    /// daemon terminates its upload, which it recorded as owed first.
    func testFailedItem_hasItsUploadTerminated_byTheDaemon() throws {
        let server = try TusServer.start(self)
        let proxy = try S3FaultProxy(self, upstreamPort: server.port)
        proxy.setFault { method, _ in method == "PATCH" ? .answer(status: 403, body: "no more") : nil }
        let spool = try TestSpool(self)
        try spool.drop("refused.bin", payload((3 << 20) + 7, seed: 34))

        let drained = try SpooldProcess.run(
            arguments("drain", spool, proxy.endpoint + "/files/", ["--tus-chunk-size", "1M", "-v"]), environment: unarmed)

        XCTAssertEqual(drained.exitCode, 1, drained.stderr)
        XCTAssertEqual(spool.files(in: "failed").count, 2)
        XCTAssertTrue(waitUntil(timeout: 10) { server.uploads.isEmpty }, "terminated: \(proxy.log)")
        XCTAssertTrue(drained.stderr.contains("terminated tus upload \(proxy.endpoint)/files/"), drained.stderr)
        XCTAssertEqual(spool.owedAborts, [])
    }

    // MARK: Options

    func testOptions_thatTusDoesNotUse_areRefused_andTheChunkSizeNeedsATusURL() throws {
        let spool = try TestSpool(self)
        for (more, url) in [(["--form", "f"], "tus+http://127.0.0.1:9/files/"), (["--method", "POST"], "tus+https://h/files/"),
                            (["--tus-chunk-size", "1M"], "http://127.0.0.1:9/in/"), (["--tus-chunk-size", "1K"], "tus+http://h/files/")] {
            let run = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", url] + more)
            XCTAssertEqual(run.exitCode, 2, "\(more) \(url): \(run.stderr)")
        }
    }

    /// The last offset the item's log noted (0 without one).
    private func notedOffset(_ spool: TestSpool) -> Int64 {
        guard let name = spool.partLogs.first, let bytes = FileManager.default.contents(atPath: spool.path + "/parts/" + name) else { return 0 }
        return PartLogCodec.decode(Array(bytes)).tusOffset
    }
}
