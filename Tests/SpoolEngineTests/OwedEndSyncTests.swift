import Dispatch
import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// The end an upload given up owes (an S3 abort, a tus termination, in `parts/aborts.log`) is
/// made durable off the engine's loop, by its durability worker, like the part logs' other
/// records: here its fsync is held (a disk stuck for a minute) while the loop goes on taking
/// answers and starting uploads, and what relies on the debt waits for it.
final class OwedEndSyncTests: EngineTestCase {
    /// Items queued before the engine starts, oldest first, of `sizes` bytes.
    private func enqueue(_ sizes: [Int]) throws -> [ItemID] {
        var items = TestItems()
        var batch: [NewItem] = []
        for (i, size) in sizes.enumerated() {
            try temp.write([UInt8](repeating: UInt8(ascii: "a") + UInt8(i), count: size), to: "q\(i)", in: .incoming)
            batch.append(items.incoming("q\(i)"))
        }
        _ = try temp.open().add(batch)
        return batch.map(\.id)
    }

    /// Steps the engine (its syncs on a thread of their own) until `done` holds, within 20 s; the
    /// clock moves on a little each time (a sync made while every upload slot is busy is looked
    /// at within a second).
    private func step(_ embedded: EmbeddedEngine, until what: String, _ done: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while !done() {
            guard Date() < deadline else { throw EmbeddedEngine.NotAnswered(description: "never: \(what)") }
            try embedded.advanceTime(by: 0.1)
            usleep(1000)
        }
    }

    /// Holds every fsync of `aborts.log` until `gate` is signalled; `entered` is signalled as one begins.
    private func holdAbortsSync() -> (gate: DispatchSemaphore, entered: DispatchSemaphore) {
        let gate = DispatchSemaphore(value: 0), entered = DispatchSemaphore(value: 0)
        addTeardownBlock { gate.signal() }
        fs.hold(.sync, until: gate, entered: entered) { $0.name == AbortLog.fileName }
        return (gate, entered)
    }

    private var aborts: String { (try? String(contentsOfFile: temp.spoolPath + "/parts/" + AbortLog.fileName, encoding: .utf8)) ?? "" }

    private func owed() throws -> [String] {
        let spool = try temp.open()
        return withExtendedLifetime(spool) { spool.partLogs.aborts.owed.map(\.uploadID) }
    }

    private final class Noted: EngineObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var list: [MultipartNote] = []
        private var ended: [(OwedAbort, AbortSchedule.Result)] = []
        func multipartNoted(_ id: ItemID, _ note: MultipartNote) { lock.withLock { list.append(note) } }
        func abortEnded(_ abort: OwedAbort, _ result: AbortSchedule.Result) { lock.withLock { ended.append((abort, result)) } }
        var notes: [MultipartNote] { lock.withLock { list } }
        var abortsEnded: [(OwedAbort, AbortSchedule.Result)] { lock.withLock { ended } }
    }

    /// A multipart item refused for good owes its upload's abort: written at once, its fsync made
    /// by the worker while the loop takes the next answer and starts the next uploads; the item
    /// moves to failed/, its part log goes and the abort is sent only once the debt is durable.
    func testParkedMultipartItem_owesItsAbortOffTheLoop_andIsParkedOnlyOnceThatIsDurable() throws {
        let ids = try enqueue([64, 8, 8, 8])
        var configuration = configuration(concurrency: 2, direct: false)
        configuration.multipartThreshold = 32
        let embedded = try EmbeddedEngine(spool: temp.open(fs: fs), configuration: configuration, clock: clock, syncs: .own)
        let held = holdAbortsSync()
        try embedded.advanceTime(by: 1)
        XCTAssertEqual(embedded.transport.started.map(\.request.id), Array(ids[0..<2]))
        let big = embedded.transport.started[0].request
        try embedded.record(.s3Upload(.init(size: 64, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: big.url)), of: big)
        let logPath = temp.spoolPath + "/parts/\(big.id).log"
        XCTAssertTrue(FileManager.default.fileExists(atPath: logPath))

        try embedded.transport.answerNext(.status(400))  // refused for good: parked
        try step(embedded, until: "the abort owed is being synced") { held.entered.wait(timeout: .now()) == .success }
        // The disk is stuck in that fsync; the loop is not.
        try embedded.transport.answerNext(.status(201))
        try step(embedded, until: "the freed slot takes the last item") { embedded.transport.started.count == 4 }
        XCTAssertEqual(embedded.transport.started.map(\.request.id), ids, "every item started while the abort's fsync is held")
        XCTAssertEqual(fs.heldCallsTimedOut, 0, "the loop never waited for the held fsync")
        XCTAssertTrue(aborts.contains("u1"), "the abort owed is written, its sync held")
        XCTAssertEqual(temp.names(in: .failed), [], "not parked before its abort owed is durable")
        XCTAssertEqual(Set(temp.names(in: .inflight).filter { $0.hasPrefix(big.id.description) }), ["\(big.id).a1.blob", "\(big.id).a1.json"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: logPath), "the log goes only once the abort owed is durable")
        XCTAssertFalse(embedded.transport.started.contains { $0.request.method == "DELETE" }, "the abort is sent once it is owed durably")

        held.gate.signal()
        try step(embedded, until: "the abort is sent") { embedded.transport.started.contains { $0.request.method == "DELETE" } }
        XCTAssertEqual(embedded.transport.started.last?.request.url, big.url + "?uploadId=u1")
        XCTAssertEqual(temp.names(in: .failed), ["\(big.id).a1.blob", "\(big.id).a1.json"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: logPath))
        XCTAssertEqual(try owed(), ["u1"])
    }

    /// The abort owed cannot be made durable (its fsync fails on the worker): the daemon stops, as
    /// for any failed sync, and the item is not parked: it stays in inflight/ with its part log,
    /// for start-up recovery (the attempt is tried again, the upload resumed or given up anew).
    func testFailedSyncOfTheAbortOwed_stopsTheEngine_withTheItemNotParked() throws {
        let ids = try enqueue([64])
        var configuration = configuration(concurrency: 1, direct: false)
        configuration.multipartThreshold = 32
        let embedded = try EmbeddedEngine(spool: temp.open(fs: fs), configuration: configuration, clock: clock, syncs: .own)
        try embedded.advanceTime(by: 1)
        let big = try XCTUnwrap(embedded.transport.started.first?.request)
        try embedded.record(.s3Upload(.init(size: 64, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: big.url)), of: big)
        fs.failCall(.sync, errno: EIO) { $0.name == AbortLog.fileName }
        try embedded.transport.answerNext(.status(400))

        let deadline = Date().addingTimeInterval(20)
        var stopped: (any Error)?
        while stopped == nil && Date() < deadline {
            do { try embedded.advanceTime(by: 0.1) } catch { stopped = error }
            usleep(1000)
        }
        XCTAssertEqual((stopped as? SystemError)?.errno, .ioError, "\(String(describing: stopped))")
        XCTAssertEqual(temp.names(in: .failed), [], "not parked: its abort owed is not durable")
        XCTAssertEqual(Set(temp.names(in: .inflight)), ["\(ids[0]).a1.blob", "\(ids[0]).a1.json"], "left for start-up recovery")
        XCTAssertTrue(FileManager.default.fileExists(atPath: temp.spoolPath + "/parts/\(ids[0]).log"), "its upload still named")
        XCTAssertFalse(embedded.transport.started.contains { $0.request.method == "DELETE" })
    }

    /// An item whose part log is a tus upload's, sent to S3 now (the operator switched `--url`):
    /// its S3 upload's driver has the engine give the tus upload up, as a start-over (its
    /// termination owed, then the log discarded), on the worker's thread; the transport's queue
    /// and the loop go on meanwhile, and CreateMultipartUpload goes out only once the debt is
    /// durable and the old log gone.
    func testALogOfTheOtherKind_isGivenUpOffTheLoopAndTheTransport_beforeTheUploadBegins() throws {
        let partSize: Int64 = 5 << 20
        let ids = try enqueue([Int(partSize) + 1, 8, 8])
        let tus = TusUploadRecord(size: partSize + 1, uploadURL: "http://127.0.0.1:9/files/t1", endpoint: "http://127.0.0.1:9/files/")
        let spool = try temp.open()
        try withExtendedLifetime(spool) { try spool.partLogs.log(for: ids[0]).write(.tusUpload(tus)).perform() }
        var configuration = configuration(concurrency: 2, direct: false)
        configuration.multipartThreshold = partSize
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1")
        let clock = self.clock!
        let held = holdAbortsSync(), noted = Noted()
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration, clock: clock, observers: [noted], syncs: .own,
            wrapping: { S3SigningTransport(wrapping: $0, signer: signer, clock: clock, multipart: .init(partSize: partSize, concurrency: 1, deadlineSeconds: 60)) })
        try embedded.advanceTime(by: 1)
        try step(embedded, until: "the termination owed is being synced") { held.entered.wait(timeout: .now()) == .success }
        let logPath = temp.spoolPath + "/parts/\(ids[0]).log"

        // The disk is stuck in that fsync; the transport's queue (which signs every request and
        // runs the multipart driver) and the loop are not.
        try step(embedded, until: "the small item's request goes out") { embedded.transport.inFlight == 1 }
        XCTAssertEqual(embedded.transport.started.map(\.request.id), [ids[1]])
        try embedded.transport.answerNext(.status(200))
        try step(embedded, until: "the freed slot takes the last item") { embedded.transport.started.count == 2 }
        XCTAssertEqual(embedded.transport.started.map(\.request.id), [ids[1], ids[2]], "no request of the multipart upload yet")
        XCTAssertEqual(fs.heldCallsTimedOut, 0, "neither the loop nor the transport waited for the held fsync")
        XCTAssertTrue(aborts.contains("terminate"), "the termination owed is written, its sync held")
        XCTAssertTrue(FileManager.default.fileExists(atPath: logPath), "the tus log goes only once its termination owed is durable")
        XCTAssertEqual(noted.notes, [], "said once it holds")

        held.gate.signal()
        try step(embedded, until: "CreateMultipartUpload goes out") {
            embedded.transport.started.contains { $0.request.id == ids[0] && $0.request.url.hasSuffix("?uploads=") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: logPath), "the tus log is gone (the new upload id is not recorded yet)")
        XCTAssertEqual(try owed(), [tus.uploadURL])
        XCTAssertEqual(noted.notes.first, StartOverRecord(otherKind: .tus(tus, offset: 0)).note)
        guard case .abortOwed(let owed)? = noted.notes.dropFirst().first else { return XCTFail("\(noted.notes)") }
        XCTAssertEqual(owed.kind, .tusTermination)
        // An S3 daemon does not send a tus termination (nor its signature to the tus server): held for a start with a tus+ URL.
        try step(embedded, until: "the termination is tried") { !noted.abortsEnded.isEmpty }
        guard case .held? = noted.abortsEnded.first?.1 else { return XCTFail("\(noted.abortsEnded)") }
        XCTAssertFalse(embedded.transport.started.contains { $0.request.method == "DELETE" }, "\(embedded.transport.started.map(\.request.url))")
    }
}
