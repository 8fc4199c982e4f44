import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// The engine performs the part logs' records (`Engine+Records`): an S3 driver asks for each and
/// goes on only once the engine says it is durable; the engine hands the sync to its durability
/// worker like a round's, so here the test holds the worker (`HeldSyncs`) and answers the
/// store's requests itself (the real S3 driver over a scripted transport).
final class PartRecordTests: EngineTestCase {
    private static let partSize: Int64 = 5 << 20

    private func answer(_ status: Int, body: String? = nil, etag: String? = nil) -> UploadOutcome {
        var answer = HTTPAnswer(status: status, excerpt: body)
        answer.body = body.map { Array($0.utf8) }
        answer.etag = etag
        return .answered(answer)
    }

    /// Steps the engine until `done` holds (the driver works on a queue of its own), within 20 s;
    /// `by`: the clock moves on that much at each step (a commit's sync made while every upload
    /// slot is busy is looked at within a second; a record's wakes the loop at once).
    private func step(_ embedded: EmbeddedEngine, by seconds: Double = 0, until what: String, _ done: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while !done() {
            guard Date() < deadline else { throw EmbeddedEngine.NotAnswered(description: "never: \(what)") }
            try embedded.advanceTime(by: seconds)
            usleep(1000)
        }
    }

    /// The requests the store got, as `METHOD query`.
    private func requests(_ embedded: EmbeddedEngine) -> [String] {
        embedded.transport.started.map { "\($0.request.method) " + ($0.request.url.split(separator: "?", maxSplits: 1).dropFirst().first ?? "") }
    }

    /// The sync of a record is held: the driver must not go on. A moment for it to misbehave
    /// (its queue runs meanwhile), then the engine steps again.
    private func holdOn(_ embedded: EmbeddedEngine) throws {
        usleep(50_000)
        try embedded.advanceTime(by: 0)
    }

    func testS3Upload_sendsNoPartBeforeTheRecordItReliesOnIsDurable() throws {
        // Three parts of 5 MiB, one at a time (concurrency 1).
        let size = 2 * Int(Self.partSize) + 1
        try temp.write([UInt8](repeating: 7, count: size), to: "big.bin", in: .incoming)
        try setModificationTime(of: "big.bin", age: 60)
        var configuration = configuration(direct: false)
        configuration.multipartThreshold = Self.partSize
        let held = HeldSyncs()
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1")
        let clock = self.clock!
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration, clock: clock, syncs: held.thread,
            wrapping: { S3SigningTransport(wrapping: $0, signer: signer, clock: clock, multipart: .init(partSize: Self.partSize, concurrency: 1, deadlineSeconds: 60)) })
        // The intake's and the claim's syncs: made, so what is held from here is the records'.
        try step(embedded, by: 1, until: "the claim is durable") {
            held.release()
            return embedded.engine.commitsInFlight == 0 && held.waiting == 0 && embedded.transport.inFlight == 1
        }
        XCTAssertEqual(requests(embedded), ["POST uploads="])
        try embedded.transport.answerNext(answer(200, body: "<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>"))

        try step(embedded, until: "the upload id's sync is handed over") { held.waiting > 0 }
        try holdOn(embedded)
        XCTAssertEqual(requests(embedded), ["POST uploads="], "no part before the upload id is durable")
        held.release()
        try step(embedded, until: "part 1 is sent") { embedded.transport.inFlight == 1 }

        for part in 1...3 {
            XCTAssertEqual(requests(embedded).last, "PUT partNumber=\(part)&uploadId=u1")
            try embedded.transport.answerNext(answer(200, etag: "\"e\(part)\""))
            try step(embedded, until: "part \(part)'s sync is handed over") { held.waiting > 0 }
            try holdOn(embedded)
            XCTAssertEqual(requests(embedded).count, 1 + part, "nothing sent before part \(part)'s ETag is durable: \(requests(embedded))")
            held.release()
            try step(embedded, until: "the next step after part \(part)") { embedded.transport.inFlight == 1 }
        }
        XCTAssertEqual(requests(embedded).last, "POST uploadId=u1", "completed once every part is durable")
        let log = try String(contentsOfFile: temp.spoolPath + "/parts/" + (try XCTUnwrap(fs.calls(.sync).last { $0.name.hasSuffix(".log") }?.name)), encoding: .utf8)
        XCTAssertTrue(log.contains("u1") && log.contains("\"e3\""), log)
        try embedded.transport.answerNext(answer(200, body: "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>"))
        try step(embedded, by: 1, until: "the success is recorded") {
            held.release()
            return temp.names(in: .inflight).isEmpty && embedded.engine.commitsInFlight == 0
        }
        XCTAssertEqual(temp.names(in: .pending), [])
        XCTAssertEqual(temp.names(in: .failed), [])
    }

    private final class Noted: EngineObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var list: [MultipartNote] = []
        func multipartNoted(_ id: ItemID, _ note: MultipartNote) { lock.withLock { list.append(note) } }
        var notes: [MultipartNote] { lock.withLock { list } }
    }

    /// A driver's answer, set on whatever thread the engine answers on.
    private final class Answer: @unchecked Sendable {
        private let lock = NSLock()
        private var answer: PartRecorded?
        func set(_ value: PartRecorded) { lock.withLock { answer = value } }
        var value: PartRecorded? { lock.withLock { answer } }
    }

    /// An engine whose syncs the test holds, with one multipart item claimed (its claim durable)
    /// and its upload's recorder.
    private func claimedMultipartItem(held: HeldSyncs, observers: [any EngineObserver] = [], tus: Bool = false) throws
        -> (EmbeddedEngine, UploadRequest)
    {
        try drop("a.bin")
        var configuration = configuration(direct: false)
        if tus { configuration.tusUploads = true } else { configuration.multipartThreshold = 5 }
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration, clock: clock, observers: observers, syncs: held.thread)
        try step(embedded, by: 1, until: "the claim is durable") {
            held.release()
            return embedded.engine.commitsInFlight == 0 && held.waiting == 0 && embedded.transport.inFlight == 1
        }
        return (embedded, try XCTUnwrap(embedded.transport.started.first?.request))
    }

    /// A start-over is written once, by the engine, for both protocols: the old upload's end is
    /// owed in aborts.log and made durable before the log goes; then the start-over and the abort
    /// owed are said, the abort is sent, and the driver goes on.
    func testStartOver_owesTheOldUploadsEnd_durably_beforeTheLogGoes_thenSaysBoth() throws {
        let held = HeldSyncs(), noted = Noted()
        let (embedded, request) = try claimedMultipartItem(held: held, observers: [noted])
        let recorder = try XCTUnwrap(request.partRecorder)
        let old = PartLogCodec.State(size: request.size, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: request.url)
        let begun = Answer()
        recorder.record(.s3Upload(old)) { begun.set($0) }
        try step(embedded, until: "the upload id is durable") {
            held.release()
            return begun.value == .recorded
        }
        let logPath = temp.spoolPath + "/parts/\(request.id).log"
        let abortsPath = temp.spoolPath + "/parts/aborts.log"
        XCTAssertTrue(FileManager.default.fileExists(atPath: logPath))

        let note = MultipartNote.startedOver(.init(reason: .uploadGone, detail: "d", oldUploadID: "u1", discardedParts: 0, discardedBytes: 0))
        let startedOver = Answer()
        recorder.record(.startOver(StartOverRecord(owing: .s3(old), note: note))) { startedOver.set($0) }
        try step(embedded, until: "the owed abort's sync is handed over") { held.waiting > 0 }
        XCTAssertNil(startedOver.value, "the driver waits while the abort owed is not durable")
        XCTAssertTrue(FileManager.default.fileExists(atPath: logPath), "the log goes only once the abort owed is durable")
        XCTAssertTrue((try? String(contentsOfFile: abortsPath, encoding: .utf8))?.contains("u1") == true, "written, its sync held")
        XCTAssertEqual(noted.notes, [], "said once it holds")

        held.release()
        try step(embedded, until: "the start-over is answered") { startedOver.value != nil }
        XCTAssertEqual(startedOver.value, .recorded)
        XCTAssertFalse(FileManager.default.fileExists(atPath: logPath), "the old upload's log is gone")
        XCTAssertEqual(noted.notes.count, 2)
        XCTAssertEqual(noted.notes.first, note)
        guard case .abortOwed(let owed)? = noted.notes.last else { return XCTFail("\(noted.notes)") }
        XCTAssertEqual(owed.uploadID, "u1")
        XCTAssertEqual(embedded.transport.started.last?.request.url, request.url + "?uploadId=u1", "the abort owed is sent")
    }

    /// The offsets a tus upload notes (one per PATCH) are hints written unsynced by the engine:
    /// the first after a write wakes the loop and is written at once; those noted within the
    /// next second wake nothing and are written together at its end.
    func testTusOffsets_areWrittenByTheEngine_atMostOnceASecond_withoutAWakePerChunk() throws {
        let held = HeldSyncs()
        let (embedded, request) = try claimedMultipartItem(held: held, tus: true)
        let recorder = try XCTUnwrap(request.partRecorder)
        let begun = Answer()
        recorder.record(.tusUpload(TusUploadRecord(size: request.size, uploadURL: "http://127.0.0.1:9/files/1", endpoint: request.url))) {
            begun.set($0)
        }
        try step(embedded, until: "the upload URL is durable") {
            held.release()
            return begun.value == .recorded
        }
        let spool = try temp.open()
        func noted() -> Int64? { spool.partLogs.tusState(of: request.id)?.offset }

        recorder.noteOffset(1)
        XCTAssertTrue(embedded.events.hasEvents, "the first offset wakes the loop")
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(noted(), 1, "written at once")

        recorder.noteOffset(2)
        try embedded.advanceTime(by: 0)
        recorder.noteOffset(3)
        XCTAssertFalse(embedded.events.hasEvents, "no wake for an offset while one waits")
        XCTAssertEqual(noted(), 1, "not within a second of the last write")
        try embedded.advanceTime(by: 1)
        XCTAssertEqual(noted(), 3, "the offsets noted meanwhile, written together")
    }
}
