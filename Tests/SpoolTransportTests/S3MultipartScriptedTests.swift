import Foundation
import SpoolCore
import SpoolTransport
import Synchronization
import XCTest

/// Multipart uploads against a scripted store, for what the real servers cannot show:
/// - a resumed upload that the store still lists but will not complete (`InvalidPart`) starts
///   over once within the attempt, instead of failing the item for good; a second time, it
///   fails. Seen in a kill -9 soak against `rclone serve s3`: the object was whole, the item in
///   failed/. A part the store lacks is sent again instead (once per attempt);
/// - a completion in doubt (a 5xx, a dropped connection, an error in a 200, NoSuchUpload) and a
///   resumed upload gone with every part recorded are checked with the store: ListParts, then
///   HEAD of the key, row by row of `MultipartCompletionCheck`'s decision table;
/// - every resume and start-over is told (`MultipartNote`), with what it throws away;
/// - SSE-C headers go with every step that needs them;
/// - `--compress gzip`: a log of parts in another coding is not resumed, and a compressed
///   upload's completion in doubt is checked against the object its parts make compressed.
final class S3MultipartScriptedTests: XCTestCase {
    /// A store scripted by request: records every request as `METHOD query`.
    private final class ScriptedStore: UploadTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String] = []
        private var seenHeaders: [String: [String: String]] = [:]
        private let answer: @Sendable (String, String) -> UploadOutcome

        init(answer: @escaping @Sendable (_ method: String, _ query: String) -> UploadOutcome) { self.answer = answer }

        var requests: [String] { lock.withLock { seen } }
        /// What this store answers `method` `query` (without recording it).
        func answerFor(_ method: String, _ query: String) -> UploadOutcome { answer(method, query) }
        /// The headers each request (`METHOD query`) was sent with, the last of each.
        var headers: [String: [String: String]] { lock.withLock { seenHeaders } }

        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            let query = request.url.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            lock.withLock {
                seen.append("\(request.method) \(query)")
                seenHeaders["\(request.method) \(query)"] = request.headers
            }
            let outcome = answer(request.method, query)
            DispatchQueue.global().async { completion(outcome) }
        }

        func cancelAll() {}
    }

    /// The part log as the spool would keep it, in memory, recorded as the engine does (a
    /// start-over owes the old upload's abort, says so, and discards the log), answered at once.
    private final class MemoryJournal: PartRecorder, @unchecked Sendable {
        let id: ItemID
        private let lock = NSLock()
        private var state: PartLogCodec.State?
        private let notes: Notes

        init(id: ItemID, notes: Notes, state: PartLogCodec.State?) { (self.id, self.state, self.notes) = (id, state, notes) }

        var current: PartLogCodec.State? { lock.withLock { state } }
        func load() -> LoggedUpload? { lock.withLock { state.map { .s3($0) } } }
        func record(_ record: PartRecord, then: @escaping @Sendable (PartRecorded) -> Void) {
            switch record {
            case .s3Upload(let upload): lock.withLock { state = upload }
            case .part(let number, let etag): lock.withLock { state?.parts[number] = etag }
            case .tusUpload: preconditionFailure("an S3 upload")
            case .startOver(let over):
                let owed = over.owed(by: id, since: Timestamp(millisecondsSinceEpoch: 0))
                lock.withLock {
                    if let owed { owedAborts.append(owed) }
                    state = nil
                }
                notes.add(over.note)
                if let owed { notes.add(.abortOwed(owed)) }
            }
            then(.recorded)
        }
        func noteOffset(_ offset: Int64) {}
        func reached(_ step: MultipartStep) {}
        func reached(_ step: TusStep) {}
        private var owedAborts: [OwedAbort] = []
        var owed: [String] { lock.withLock { owedAborts.map(\.uploadID) } }
    }

    /// The notes an attempt told, in order.
    private final class Notes: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [MultipartNote] = []
        func add(_ note: MultipartNote) { lock.withLock { list.append(note) } }
        var all: [MultipartNote] { lock.withLock { list } }
        var startOvers: [MultipartNote.StartOver] { all.compactMap { if case .startedOver(let s) = $0 { s } else { nil } } }
        var checks: [MultipartNote.CompletionCheck] { all.compactMap { if case .completionChecked(let c) = $0 { c } else { nil } } }
        var resumes: [MultipartNote.Resume] { all.compactMap { if case .resumed(let r) = $0 { r } else { nil } } }
    }

    private static let size = (10 << 20) + 1  // three parts of 5 MiB
    private static let url = "http://127.0.0.1:9/bucket/big.bin"

    private static func xml(_ body: String) -> UploadOutcome { .answer(200, body: body) }

    private static func error(_ status: Int, _ code: String) -> UploadOutcome {
        .status(status, excerpt: "<?xml version=\"1.0\"?><Error><Code>\(code)</Code><Message>\(code)</Message></Error>")
    }

    /// What a store answers; Complete of the upload `completeFails` says InvalidPart.
    private static func store(completeFails: Set<String>) -> ScriptedStore {
        ScriptedStore { method, query in
            let upload = query.components(separatedBy: "uploadId=").dropFirst().first ?? ""
            switch method {
            case "GET":  // ListParts: the old upload still lists every part
                return xml("<ListPartsResult>" + (1...3).map { "<Part><PartNumber>\($0)</PartNumber><ETag>\"e\($0)\"</ETag></Part>" }.joined()
                           + "<IsTruncated>false</IsTruncated></ListPartsResult>")
            case "POST" where query == "uploads=":
                return xml("<InitiateMultipartUploadResult><UploadId>new</UploadId></InitiateMultipartUploadResult>")
            case "PUT":
                return .answer(200, etag: "\"n\(query.prefix { $0 != "&" })\"")
            case "POST":
                return completeFails.contains(upload) ? error(400, "InvalidPart")
                    : xml("<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>")
            case "DELETE":
                return .status(204)
            default:
                return .status(500)
            }
        }
    }

    private func upload(
        through store: ScriptedStore, headers: [String: String] = [:], resuming: Bool = true,
        recorded: [Int: String] = [1: "\"e1\"", 2: "\"e2\"", 3: "\"e3\""], url: String = S3MultipartScriptedTests.url,
        notes: Notes = Notes(), compression: ContentCoding? = nil, recordedCoding: ContentCoding? = nil
    ) throws -> (UploadOutcome, MemoryJournal) {
        var request = try uploadRequest(to: Self.url, size: Self.size)
        request.headers = headers
        request.compression = compression
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1")
        let journal = MemoryJournal(id: request.id, notes: notes, state: resuming ? PartLogCodec.State(
            size: Int64(Self.size), partSize: 5 << 20, region: "us-east-1", uploadID: "old", url: url,
            parts: recorded, coding: recordedCoding) : nil)
        request.partRecorder = journal
        request.multipartNotes = { notes.add($0) }
        let transport = S3SigningTransport(
            wrapping: store, signer: signer, clock: SystemClock(),
            multipart: .init(partSize: 5 << 20, concurrency: 2, deadlineSeconds: 10))
        let ended = expectation(description: "the attempt ends")
        let result = Mutex<UploadOutcome?>(nil)
        transport.start(request) { outcome in
            result.withLock { $0 = outcome }
            ended.fulfill()
        }
        wait(for: [ended], timeout: 10)
        return (try XCTUnwrap(result.withLock { $0 }), journal)
    }

    func testResumedUpload_theStoreWillNotComplete_startsOverOnce_andSucceeds() throws {
        let store = Self.store(completeFails: ["old"])
        let (outcome, journal) = try upload(through: store)

        XCTAssertEqual(outcome.httpStatus, 200, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(store.requests.filter { $0.hasPrefix("PUT ") }.count, 3, "every part sent to the new upload: \(store.requests)")
        XCTAssertEqual(journal.owed, ["old"], "the old upload's abort is owed (the daemon sends it): \(store.requests)")
        XCTAssertFalse(store.requests.contains { $0.hasPrefix("DELETE") }, "not sent from inside the attempt: \(store.requests)")
        XCTAssertEqual(journal.current?.uploadID, "new", "the log names the new upload")
        XCTAssertEqual(journal.current?.parts.count, 3)
    }

    func testAStoreThatNeverCompletes_failsTheAttempt_afterOneStartOver() throws {
        let store = Self.store(completeFails: ["old", "new"])
        let (outcome, _) = try upload(through: store)

        XCTAssertEqual(outcome.httpStatus, 400, outcome.summary)
        XCTAssertEqual(outcome.class, .final)
        XCTAssertEqual(store.requests.filter { $0 == "POST uploads=" }.count, 1, "started over once: \(store.requests)")
    }

    // MARK: Completions in doubt (`MultipartCompletionCheck`)

    /// Each part's ETag: an MD5-shaped one (32 hex digits of its number), so the object's ETag is
    /// known exactly.
    private static func partETag(_ number: Int) -> String { "\"" + String(repeating: String(number), count: 32) + "\"" }
    private static let recordedMD5s = [1: partETag(1), 2: partETag(2), 3: partETag(3)]
    /// The ETag S3 gives the object those three parts make.
    private static let objectETag = "\"" + MultipartCompletionCheck.multipartETag(of: [partETag(1), partETag(2), partETag(3)])! + "\""

    private struct Script: Sendable {
        /// ListParts of each upload: its parts, or nil for NoSuchUpload; a missing upload: every part.
        var listed: [String: [Int: String]?] = [:]
        /// ListParts answers this instead (e.g. a 500).
        var listAnswer: UploadOutcome?
        /// CompleteMultipartUpload of each upload; a missing upload: success.
        var complete: [String: UploadOutcome] = [:]
        /// HEAD of the key.
        var head = UploadOutcome.status(404)
    }

    private static func store(_ script: Script) -> ScriptedStore {
        ScriptedStore { method, query in
            let upload = query.components(separatedBy: "uploadId=").dropFirst().first ?? ""
            switch method {
            case "GET":
                if let answer = script.listAnswer { return answer }
                guard let parts = script.listed[upload] ?? Optional(recordedMD5s) else { return error(404, "NoSuchUpload") }
                return xml("<ListPartsResult>" + parts.sorted { $0.key < $1.key }.map {
                    "<Part><PartNumber>\($0.key)</PartNumber><ETag>\($0.value)</ETag></Part>"
                }.joined() + "<IsTruncated>false</IsTruncated></ListPartsResult>")
            case "POST" where query == "uploads=":
                return xml("<InitiateMultipartUploadResult><UploadId>new</UploadId></InitiateMultipartUploadResult>")
            case "PUT":
                return .answer(200, etag: partETag(Int(query.split(separator: "&")[0].dropFirst("partNumber=".count))!))
            case "POST":
                return script.complete[upload] ?? xml("<CompleteMultipartUploadResult><ETag>\(objectETag)</ETag></CompleteMultipartUploadResult>")
            case "HEAD":
                return script.head
            case "DELETE":
                return .status(204)
            default:
                return .status(500)
            }
        }
    }

    private static func found(size: Int = S3MultipartScriptedTests.size, etag: String = objectETag) -> UploadOutcome {
        .answer(200, etag: etag, contentLength: Int64(size))
    }

    /// The completion answered 500 after the store had made the object (the case seen in a fault
    /// run: the item went to failed/ while its object sat complete in the bucket): ListParts says
    /// NoSuchUpload, HEAD shows the object these parts make, so the item is uploaded; nothing is
    /// sent again.
    func testCompletion500_uploadGone_objectThere_isUploaded() throws {
        let store = Self.store(Script(listed: ["old": nil], complete: ["old": Self.error(500, "InternalError")], head: Self.found()))
        let notes = Notes()
        let (outcome, _) = try upload(through: store, recorded: Self.recordedMD5s, notes: notes)

        XCTAssertEqual(outcome.class, .success, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(store.requests.filter { $0.hasPrefix("PUT ") || $0 == "POST uploads=" }, [], "nothing sent again")
        XCTAssertEqual(store.requests.last, "HEAD ", "asked for the object last: \(store.requests)")
        guard case .completed = notes.checks.first?.decision else { return XCTFail("told: \(notes.all)") }
    }

    /// A dropped connection is as unclear as a 5xx; an error inside a 200 too.
    func testDroppedOrErrorIn200_areCheckedLikeA5xx() throws {
        for answer in [UploadOutcome.failed(.connectionLost),
                       Self.xml("<Error><Code>InternalError</Code><Message>We encountered an internal error</Message></Error>")] {
            let store = Self.store(Script(listed: ["old": nil], complete: ["old": answer], head: Self.found()))
            let (outcome, _) = try upload(through: store, recorded: Self.recordedMD5s)
            XCTAssertEqual(outcome.class, .success, "\(answer.summary): \(outcome.summary); \(store.requests)")
            XCTAssertTrue(store.requests.contains("HEAD "), "\(store.requests)")
        }
    }

    /// The upload still listed after an unclear completion: not completed; the attempt ends
    /// retryable with the upload and its log kept (the next attempt resumes and completes).
    func testUnclearCompletion_uploadStillOpen_retriesLater_keepingTheUpload() throws {
        let store = Self.store(Script(complete: ["old": Self.error(503, "ServiceUnavailable")]))
        let notes = Notes()
        let (outcome, journal) = try upload(through: store, recorded: Self.recordedMD5s, notes: notes)

        XCTAssertEqual(outcome.class, .retryable, outcome.summary)
        XCTAssertEqual(journal.current?.uploadID, "old")
        XCTAssertFalse(store.requests.contains("HEAD "), "an open upload was not completed: \(store.requests)")
        XCTAssertEqual(journal.owed, [])
        guard case .retryLater = notes.checks.first?.decision else { return XCTFail("told: \(notes.all)") }
    }

    /// The upload gone and no object at the key (404), or another object there (an older one of
    /// the same size and shape: only the exact ETag tells them apart): a new upload, said with
    /// the bytes thrown away.
    func testUnclearCompletion_uploadGone_noObjectOrAnother_startsOver() throws {
        for head in [UploadOutcome.status(404), Self.found(etag: "\"0123456789abcdef0123456789abcdef-3\"")] {
            let store = Self.store(Script(listed: ["old": nil], complete: ["old": Self.error(500, "InternalError")], head: head))
            let notes = Notes()
            let (outcome, journal) = try upload(through: store, recorded: Self.recordedMD5s, notes: notes)

            XCTAssertEqual(outcome.class, .success, "\(outcome.summary); \(store.requests)")
            XCTAssertEqual(store.requests.filter { $0.hasPrefix("PUT ") }.count, 3, "\(store.requests)")
            XCTAssertEqual(journal.current?.uploadID, "new")
            XCTAssertEqual(journal.owed, [], "the old upload is gone: nothing to abort")
            XCTAssertEqual(notes.startOvers.map(\.reason), [.uploadGone])
            XCTAssertEqual(notes.startOvers.first?.discardedBytes, Int64(Self.size))
            XCTAssertEqual(notes.startOvers.first?.discardedParts, 3)
        }
    }

    /// No clear answer from ListParts or HEAD: unknown; the attempt ends retryable, the upload kept.
    func testUnclearCompletion_unclearChecks_retryLater() throws {
        // A new upload's completion: ListParts unclear; ListParts gone and HEAD unclear.
        let scripts = [
            Script(listAnswer: Self.error(500, "InternalError"), complete: ["new": Self.error(500, "InternalError")]),
            Script(listed: ["new": nil], complete: ["new": Self.error(500, "InternalError")], head: .status(503)),
        ]
        for script in scripts {
            let store = Self.store(script)
            let (outcome, journal) = try upload(through: store, resuming: false)
            XCTAssertEqual(outcome.class, .retryable, "\(outcome.summary); \(store.requests)")
            XCTAssertEqual(journal.current?.uploadID, "new", "\(store.requests)")
            XCTAssertEqual(store.requests.filter { $0 == "POST uploads=" }.count, 1, "\(store.requests)")
        }
        // A resumed upload gone, every part recorded, HEAD unclear.
        let store = Self.store(Script(listed: ["old": nil], head: .status(503)))
        let (outcome, journal) = try upload(through: store, recorded: Self.recordedMD5s)
        XCTAssertEqual(outcome.class, .retryable, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(journal.current?.uploadID, "old", "kept, for the next attempt to ask again")
    }

    /// A clear refusal (a 4xx other than NoSuchUpload/InvalidPart) is not in doubt: no check.
    func testCompletion4xx_isNotChecked() throws {
        let store = Self.store(Script(complete: ["old": Self.error(400, "MalformedXML")], head: Self.found()))
        let (outcome, _) = try upload(through: store, recorded: Self.recordedMD5s)
        XCTAssertEqual(outcome.httpStatus, 400)
        XCTAssertFalse(store.requests.contains("HEAD "), "\(store.requests)")
    }

    /// A resumed upload the store no longer has while its log records every part (a crash after
    /// the completion, before its success was recorded): HEAD finds the object, nothing is sent.
    /// With parts missing from the log, no completion can have happened: a new upload, no HEAD.
    func testResume_uploadGone_everyPartRecorded_checksTheObject() throws {
        let store = Self.store(Script(listed: ["old": nil], head: Self.found()))
        let notes = Notes()
        let (outcome, _) = try upload(through: store, recorded: Self.recordedMD5s, notes: notes)
        XCTAssertEqual(outcome.class, .success, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(store.requests.map { $0.components(separatedBy: " ")[0] }, ["GET", "HEAD"], "\(store.requests)")

        let partial = Self.store(Script(listed: ["old": nil], head: Self.found()))
        let partialNotes = Notes()
        let (again, _) = try upload(through: partial, recorded: [1: Self.partETag(1)], notes: partialNotes)
        XCTAssertEqual(again.class, .success, again.summary)
        XCTAssertFalse(partial.requests.contains("HEAD "), "\(partial.requests)")
        XCTAssertEqual(partialNotes.startOvers.map(\.reason), [.uploadGone])
        XCTAssertEqual(partialNotes.startOvers.first?.discardedBytes, 5 << 20, "the one part recorded")
    }

    /// A resume says what the store listed and what the log kept.
    func testResume_isTold_withThePartsListedAndKept() throws {
        let store = Self.store(Script(listed: ["old": [1: Self.partETag(1), 2: "\"other\""]]))
        let notes = Notes()
        let (outcome, _) = try upload(through: store, recorded: [1: Self.partETag(1), 2: Self.partETag(2)], notes: notes)
        XCTAssertEqual(outcome.class, .success, outcome.summary)
        XCTAssertEqual(notes.resumes, [MultipartNote.Resume(
            uploadID: "old", partCount: 3, listed: 2, recorded: 2, kept: 1, bytesToSend: Int64(Self.size - (5 << 20)))])
        XCTAssertEqual(store.requests.filter { $0.hasPrefix("PUT ") }.count, 2, "\(store.requests)")
    }

    /// InvalidPart while the store lacks a part: that part alone is sent again and the
    /// completion repeated; nothing is thrown away.
    func testInvalidPart_aPartMissing_resendsItAlone() throws {
        final class Flip: @unchecked Sendable { var completes = 0; let lock = NSLock() }
        let flip = Flip()
        let before = Self.store(Script())
        let after = Self.store(Script(listed: ["old": [1: Self.partETag(1), 3: Self.partETag(3)]]))
        // Every part listed at the resume; the first completion refused, part 2 missing from then on.
        let store = ScriptedStore { method, query in
            let refused = flip.lock.withLock { flip.completes > 0 }
            if method == "POST", query.hasPrefix("uploadId=") {
                let first = flip.lock.withLock { flip.completes += 1; return flip.completes == 1 }
                if first { return Self.error(400, "InvalidPart") }
            }
            return (refused ? after : before).answerFor(method, query)
        }
        let notes = Notes()
        let (outcome, journal) = try upload(through: store, recorded: Self.recordedMD5s, notes: notes)
        XCTAssertEqual(outcome.class, .success, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(store.requests.filter { $0.hasPrefix("PUT ") }, ["PUT partNumber=2&uploadId=old"])
        XCTAssertEqual(notes.startOvers, [])
        XCTAssertEqual(journal.current?.uploadID, "old")
    }

    /// A log written for another object: its upload's abort is owed, and a new upload starts (said).
    func testLogForAnotherObject_owesTheOldAbort_andStartsOver() throws {
        let store = Self.store(Script())
        let notes = Notes()
        let (outcome, journal) = try upload(through: store, recorded: Self.recordedMD5s, url: "http://127.0.0.1:9/bucket/other.bin", notes: notes)
        XCTAssertEqual(outcome.class, .success, outcome.summary)
        XCTAssertEqual(journal.owed, ["old"])
        XCTAssertEqual(notes.startOvers.map(\.reason), [.objectChanged])
        XCTAssertTrue(notes.all.contains { if case .abortOwed(let a) = $0 { a.uploadID == "old" } else { false } })
    }

    /// A log of plain parts is not resumed by a compressed upload (nor the other way round): the
    /// object would mix both. The new upload records its coding, sizes its parts for it (the
    /// fixture's bytes compress to nearly nothing: one part), and only CreateMultipartUpload
    /// carries the object's Content-Encoding.
    func testLogOfPlainParts_isNotResumedCompressed_theNewUploadRecordsItsCoding() throws {
        let store = Self.store(Script())
        let notes = Notes()
        let (outcome, journal) = try upload(
            through: store, headers: ["Content-Encoding": "gzip"], recorded: Self.recordedMD5s, notes: notes, compression: .gzip)
        XCTAssertEqual(outcome.class, .success, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(notes.startOvers.map(\.reason), [.objectChanged])
        XCTAssertEqual(journal.owed, ["old"])
        let state = try XCTUnwrap(journal.current)
        XCTAssertEqual(state.coding, .gzip)
        XCTAssertEqual(state.plan.partCount, 1, "part size \(state.partSize)")
        XCTAssertEqual(store.requests.filter { $0.hasPrefix("PUT ") }, ["PUT partNumber=1&uploadId=new"])
        XCTAssertEqual(store.headers["POST uploads="]?["Content-Encoding"], "gzip")
        XCTAssertNil(store.headers["PUT partNumber=1&uploadId=new"]?["Content-Encoding"])
    }

    /// The object a compressed upload's three parts make: each part one gzip member of its range,
    /// the first two padded to S3's smallest part, one after another (as the store concatenates them).
    private static func codedObject() throws -> (size: Int, md5: String) {
        var object: [UInt8] = []
        for number in 1...3 {
            var part = try uploadRequest(to: url, size: size)
            let offset = Int64(number - 1) << 22 + Int64(number - 1) << 20  // 5 MiB each
            part.payload = .range(offset: offset, length: min(5 << 20, Int64(size) - offset))
            part.compression = .gzip
            part.codedMinimum = number < 3 ? 5 << 20 : 0
            let body = try XCTUnwrap(try part.prepared().request.requestBody)
            let reader = BodyReader(body)
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buffer.withUnsafeMutableBytes { reader.read(into: $0.baseAddress!, count: 1 << 16) }
                guard n > 0 else { XCTAssertEqual(n, 0); break }
                object += buffer[0..<n]
            }
        }
        return (object.count, MD5.hash(object).map { String(format: "%02x", $0) }.joined())
    }

    /// A compressed upload gone with every part recorded (or its completion in doubt): HEAD's
    /// object is compared with what the parts make compressed again (its size and MD5), not with
    /// the blob: that object is the item uploaded; another one (the blob's own size) starts over.
    func testCompressedUpload_uploadGone_checksTheObjectThePartsMakeCompressed() throws {
        let coded = try Self.codedObject()
        XCTAssertNotEqual(coded.size, Self.size, "two padded parts and a small member: not the blob's size")
        let store = Self.store(Script(listed: ["old": nil], head: Self.found(size: coded.size, etag: "\"\(coded.md5)\"")))
        let notes = Notes()
        let (outcome, _) = try upload(
            through: store, headers: ["Content-Encoding": "gzip"], recorded: Self.recordedMD5s, notes: notes, compression: .gzip,
            recordedCoding: .gzip)
        XCTAssertEqual(outcome.class, .success, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(store.requests.map { $0.components(separatedBy: " ")[0] }, ["GET", "HEAD"], "nothing sent again: \(store.requests)")
        guard case .completed = notes.checks.first?.decision else { return XCTFail("told: \(notes.all)") }

        // The blob's size and the parts' multipart ETag: what plain parts would make, not these.
        let plain = Self.store(Script(listed: ["old": nil], head: Self.found()))
        let plainNotes = Notes()
        _ = try upload(
            through: plain, headers: ["Content-Encoding": "gzip"], recorded: Self.recordedMD5s, notes: plainNotes, compression: .gzip,
            recordedCoding: .gzip)
        guard case .startOver = plainNotes.checks.first?.decision else { return XCTFail("told: \(plainNotes.all)") }
    }

    /// SSE-C: the customer's key goes with CreateMultipartUpload, every part and the completion
    /// (S3 refuses a part without it), signed like every `x-amz-*` header; other headers of the
    /// item go with CreateMultipartUpload only.
    func testCustomerKeyHeaders_goWithEveryPartAndTheCompletion() throws {
        let sse = [
            "x-amz-server-side-encryption-customer-algorithm": "AES256",
            "x-amz-server-side-encryption-customer-key": "a2V5", "x-amz-server-side-encryption-customer-key-MD5": "bWQ1",
        ]
        let store = Self.store(completeFails: [])
        let (outcome, _) = try upload(through: store, headers: sse.merging(["x-amz-meta-camera": "7"]) { $1 }, resuming: false)

        XCTAssertEqual(outcome.httpStatus, 200, "\(outcome.summary); \(store.requests)")
        let steps = store.headers.filter { $0.key.hasPrefix("PUT ") || $0.key == "POST uploadId=new" }
        XCTAssertEqual(steps.count, 4, "three parts and the completion: \(store.requests)")
        for (step, headers) in steps {
            for name in sse.keys {
                XCTAssertEqual(headers[name.lowercased()], sse[name], "\(step) \(name)")
            }
            XCTAssertTrue(headers["Authorization"]?.contains("x-amz-server-side-encryption-customer-key-md5") == true, step)
            XCTAssertNil(headers["x-amz-meta-camera"], "\(step): the object's metadata goes with its creation only")
        }
        XCTAssertEqual(store.headers["POST uploads="]?["x-amz-meta-camera"], "7")
    }
}
