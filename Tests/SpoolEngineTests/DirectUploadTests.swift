import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// Direct uploads (the default): while the endpoint answers and nothing queued is due, a file from
/// incoming/ is sent at once as `inflight/<id>.a1.blob`, with no json, index record or sync; only
/// an attempt that does not succeed makes it an item, durably.
final class DirectUploadTests: EngineTestCase {
    private var indexText: String { (try? String(contentsOfFile: temp.spoolPath + "/index.wal", encoding: .utf8)) ?? "" }

    private func json(_ folder: SpoolFolder) throws -> [String: Any] {
        let name = try XCTUnwrap(temp.names(in: folder).first { $0.hasSuffix(".json") }, "no json in \(folder)")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(temp.read(folder, name))) as? [String: Any])
    }

    private func dropInSubfolder() throws {
        try FileManager.default.createDirectory(atPath: temp.path(.incoming, "cams/7"), withIntermediateDirectories: true)
        _ = try temp.write(Array("fox".utf8), atPath: temp.path(.incoming, "cams/7/fox.jpg"))
        try setModificationTime(of: "cams/7/fox.jpg", age: 60)
    }

    private func syncs() -> Int { fs.calls.filter { $0.operation == .sync || $0.operation == .syncFileSystem }.count }

    /// Nothing is recorded or synced for a direct upload before its answer; a success removes the
    /// blob and then syncs inflight/, which is what makes the success durable.
    func testFileDroppedIn_isSentAsALoneBlobInInflight_andRemovedOnSuccess_withNothingRecorded_onlyTheRemovalSynced() throws {
        try dropInSubfolder()
        let spool = try temp.open(fs: fs)
        let embedded = try EmbeddedEngine(spool: spool, configuration: configuration(settle: 0), clock: clock)
        fs.resetLog()
        try embedded.advanceTime(by: 0)
        let request = try XCTUnwrap(embedded.transport.started.first?.request)
        XCTAssertTrue(request.url.hasSuffix("/cams/7/fox.jpg"), request.url)
        XCTAssertEqual(request.attempt, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temp.path(.incoming, "cams/7")), [], "taken out of the producer's way at once")
        let inflight = temp.names(in: .inflight)
        XCTAssertEqual(inflight.count, 1)
        XCTAssertTrue(inflight[0].hasSuffix(".a1.blob"), "\(inflight)")
        XCTAssertEqual(temp.names(in: .pending) + temp.names(in: .tmp), [])
        XCTAssertEqual(syncs(), 0, "nothing made durable before the answer: \(fs.calls.filter { $0.operation == .sync })")

        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)
        try spool.drainRemovals()
        XCTAssertEqual(temp.names(in: .inflight), [])
        let synced = fs.calls.filter { $0.operation == .sync || $0.operation == .syncFileSystem }.map(\.description)
        XCTAssertEqual(synced, ["sync <root>/inflight (dir)"], "only the removal made durable")
        XCTAssertFalse(indexText.contains("fox.jpg"), "nothing was recorded: \(indexText)")
    }

    func testFailedAttempt_makesTheFileADurableItem_withItsNameAndHistory() throws {
        try drop("a.txt")
        let embedded = try start(configuration(settle: 0))
        fs.resetLog()
        try embedded.transport.answerNext(.status(503))
        try embedded.advanceTime(by: 0)

        XCTAssertEqual(attempts(in: .pending), [1], "the attempt made counts")
        XCTAssertEqual(temp.names(in: .inflight), [])
        let item = try json(.pending)
        XCTAssertEqual(item["originalName"] as? String, "a.txt")
        let history = try XCTUnwrap(item["attempts"] as? [[String: Any]])
        XCTAssertEqual(history.map { $0["httpStatus"] as? Int }, [503])
        XCTAssertTrue(fs.calls.contains { $0.operation == .syncFileSystem }, "the blob, never synced, is made durable with its json")
        XCTAssertTrue(indexText.contains("requeue"), indexText)

        // The retry is an ordinary claim of the item, under the same id.
        try embedded.advanceTime(by: 600)
        XCTAssertEqual(embedded.transport.started.count, 2)
        XCTAssertEqual(embedded.transport.started[0].request.id, embedded.transport.started[1].request.id)
        XCTAssertEqual(embedded.transport.started[1].request.attempt, 2)
    }

    func testOneFilePerFreeSlot_theRestWaitInIncoming() throws {
        for n in 0..<5 { try drop("f\(n).txt") }
        let spool = try temp.open(fs: fs)
        let embedded = try EmbeddedEngine(spool: spool, configuration: configuration(settle: 0, concurrency: 2), clock: clock)
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.inFlight, 2)
        XCTAssertEqual(temp.names(in: .incoming).count, 3, "waiting, untouched")
        XCTAssertEqual(temp.names(in: .pending), [])

        embedded.transport.autoAnswer = .status(201)
        try embedded.transport.answerNext(.status(201))
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)
        try spool.drainRemovals()
        XCTAssertEqual(embedded.transport.started.count, 5)
        XCTAssertEqual(temp.names(in: .incoming) + temp.names(in: .inflight) + temp.names(in: .pending), [])
    }

    func testDuringAnOutage_filesAreTakenInAsItems_notSentDirectly() throws {
        try drop("a.txt")
        try drop("b.txt")
        let embedded = try start(configuration(settle: 0))
        try embedded.transport.answerNext(.failed(.connectionRefused))
        try embedded.advanceTime(by: 0)
        // a.txt was handed back (an outage counts no attempt), b.txt taken in as an item.
        XCTAssertEqual(attempts(in: .pending).sorted(), [0, 0])
        XCTAssertEqual(temp.names(in: .incoming), [])
        XCTAssertEqual(embedded.transport.started.count, 1)
    }

    func testASidecar_makesTheFileAnItemFirst() throws {
        try temp.write(Array(#"{"headers": {"X-Camera": "trap-7"}}"#.utf8), to: "a.txt.meta.json", in: .incoming)
        try drop("a.txt")
        let embedded = try start(configuration(settle: 0))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(attempts(in: .inflight), [1], "claimed as an item, with its json")
        XCTAssertEqual(embedded.transport.started.first?.request.headers["X-Camera"], "trap-7")
    }

    func testSecondStop_handsADirectUploadBack_asAnItemWithItsName() throws {
        try drop("a.txt")
        let embedded = try start(configuration(settle: 0))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.inFlight, 1)
        embedded.engine.requestStop()
        try embedded.advanceTime(by: 1)
        embedded.engine.requestStop()
        try embedded.advanceTime(by: 1)

        XCTAssertNotNil(embedded.summary)
        XCTAssertEqual(attempts(in: .pending), [0], "handed back uncounted")
        XCTAssertEqual(try json(.pending)["originalName"] as? String, "a.txt")
        XCTAssertEqual(temp.names(in: .inflight), [])
    }

    /// A power cut while recovery wrote a lone blob's new json in tmp/ (before its fsync) can
    /// leave that json empty or torn: it vouches for nothing (no record names it), so the next
    /// recovery does not take it over the blob, but recreates the json again.
    func testTornJsonInTmp_fromACutRecovery_isNotTrusted_theLoneBlobGetsItsJsonAgain() throws {
        try dropInSubfolder()
        let spool = try temp.open()
        let id = try XCTUnwrap(ItemID("20261123T100000000Z-0000-00000007-fox.jpg"))
        guard case .taken(let fd, _) = spool.takeForDirectUpload("cams/7/fox.jpg", as: id) else { return XCTFail("not taken") }
        close(fd.rawValue)
        try temp.write(Array("{\"version\": 1, \"id\": \"2026".utf8), to: "\(id).a1.json", in: .tmp)

        let embedded = try start(configuration(settle: 0))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(temp.names(in: .failed), [], "not parked for unreadable metadata")
        XCTAssertEqual(embedded.transport.started.first?.request.attempt, 2)
        XCTAssertEqual(try json(.inflight)["originalName"] as? String, "cams/7/fox.jpg")
    }

    /// A process that dies during a direct upload leaves a lone blob in inflight/: recovery makes
    /// it an item with its original name (from the blob's attribute) and an interrupted attempt.
    func testCrashDuringADirectUpload_recoveryMakesAnItemWithItsName_andAnInterruptedAttempt() throws {
        try dropInSubfolder()
        let spool = try temp.open()
        let id = try XCTUnwrap(ItemID("20261123T100000000Z-0000-00000007-fox.jpg"))
        guard case .taken(let fd, _) = spool.takeForDirectUpload("cams/7/fox.jpg", as: id) else {
            return XCTFail("not taken")
        }
        close(fd.rawValue)  // the process died here

        let embedded = try start(configuration(settle: 0))
        try embedded.advanceTime(by: 0)
        let request = try XCTUnwrap(embedded.transport.started.first?.request)
        XCTAssertEqual(request.id, id, "the same id: the same Idempotency-Key")
        XCTAssertTrue(request.url.hasSuffix("/cams/7/fox.jpg"), request.url)
        XCTAssertEqual(request.attempt, 2)
        let item = try json(.inflight)
        XCTAssertEqual(item["originalName"] as? String, "cams/7/fox.jpg")
        XCTAssertEqual(item["contentType"] as? String, "image/jpeg")
        let history = try XCTUnwrap(item["attempts"] as? [[String: Any]])
        XCTAssertEqual(history.map { $0["outcome"] as? String }, ["interrupted"])
    }

    /// A file larger than an S3 part goes directly too, as a multipart upload: its part log is
    /// written but not synced (a kill -9 keeps it; the page cache does) until the upload has run
    /// `directDurableSeconds`. Then the blob is synced before the log, and every later record as
    /// it is written.
    func testDirectMultipartUpload_syncsItsPartLogOnlyOnceItsBlobIsMadeDurable() throws {
        try drop("big.bin")
        let size = Int64("content of big.bin".utf8.count)
        var configuration = configuration(settle: 0)
        configuration.multipartThreshold = 5
        let spool = try temp.open(fs: fs)
        let embedded = try EmbeddedEngine(spool: spool, configuration: configuration, clock: clock)
        fs.resetLog()
        try embedded.advanceTime(by: 0)
        let request = try XCTUnwrap(embedded.transport.started.first?.request)
        let recorder = try XCTUnwrap(request.partRecorder, "sent as a multipart upload")
        let blob = try XCTUnwrap(temp.names(in: .inflight).first)
        XCTAssertEqual(temp.names(in: .inflight), [blob], "a lone blob: sent directly")
        // What the multipart upload records as it goes (the transport is scripted here; the engine writes).
        try embedded.record(.s3Upload(.init(size: size, partSize: 5, region: "us-east-1", uploadID: "u1", url: request.url)), of: request)
        try embedded.record(.part(1, etag: "\"e1\""), of: request)
        // The one sync allowed: the spool root, once parts/ is made (it vouches for no bytes).
        let rootSync = "sync <root> (dir)"
        try embedded.advanceTime(by: configuration.directDurableSeconds - 1)
        try spool.drainRemovals()
        XCTAssertEqual(fs.calls.filter { $0.operation == .sync }.map(\.description), [rootSync], "nothing synced yet")
        XCTAssertEqual(syncs(), 1)

        fs.resetLog()
        try embedded.advanceTime(by: 1)
        try spool.drainRemovals()
        let synced = fs.calls.filter { $0.operation == .sync }.map(\.description)
        let log = "\(recorder.id).log"
        XCTAssertEqual(synced, ["sync inflight/\(blob)", "sync <root>/inflight (dir)", "sync parts/\(log)", "sync <root>/parts (dir)"])
        fs.resetLog()
        try embedded.record(.part(2, etag: "\"e2\""), of: request)
        XCTAssertEqual(fs.calls.filter { $0.operation == .sync }.map(\.description), ["sync parts/\(log)"], "synced as written now")

        try embedded.transport.answerNext(.status(200))
        try embedded.advanceTime(by: 0)
        try spool.drainRemovals()
        XCTAssertEqual(temp.names(in: .inflight), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp.spoolPath + "/parts/" + log), "the log goes with the upload")
    }

    /// One field per header name whatever its spelling: a credential header wins over a
    /// configured one spelled in another case, instead of both being sent.
    func testHeaders_sameNameInAnotherCase_areSentOnce_theLaterSourceWinning() throws {
        try drop("a.txt")
        var configuration = configuration(settle: 0)
        configuration.headers = ["x-token": "configured", "X-Camera": "7"]
        configuration.credentialHeaders = ["X-Token": "secret"]
        let embedded = try start(configuration)
        try embedded.advanceTime(by: 0)
        let request = try XCTUnwrap(embedded.transport.started.first?.request)
        XCTAssertEqual(request.headers.filter { $0.key.lowercased() == "x-token" }, ["X-Token": "secret"])
        XCTAssertEqual(request.headers["X-Camera"], "7")
    }

    func testNoDirect_takesEveryFileInAsAnItemFirst() throws {
        try drop("a.txt")
        let embedded = try start(configuration(settle: 0, direct: false))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(attempts(in: .inflight), [1], "claimed as an item, with its json")
        XCTAssertTrue(indexText.contains("add"), indexText)
    }
}
