import SpoolCore
import XCTest

/// Every transition of `S3MultipartUpload`, the S3 multipart protocol `S3MultipartAttempt` drives:
/// requests' outcomes and records in, actions out.
final class S3MultipartUploadTests: XCTestCase {
    private let url = "http://s3.example:9000/bucket/a.bin"
    private let mib: Int64 = 1 << 20
    /// Three parts: 5 MiB, 5 MiB, 2 MiB.
    private var size: Int64 { 12 * mib }
    private let etags = [1: "\"e1\"", 2: "\"e2\"", 3: "\"e3\""]

    private func upload(journaled: Bool = true, concurrency: Int = 2, size: Int64? = nil, coding: ContentCoding? = nil) -> S3MultipartUpload {
        S3MultipartUpload(.init(
            url: url, region: "us-east-1", size: size ?? self.size, preferredPartSize: 5 * mib, concurrency: concurrency,
            journaled: journaled, coding: coding))
    }

    private func record(
        uploadID: String = "u0", url: String? = nil, parts: [Int: String] = [:], region: String = "us-east-1", size: Int64? = nil,
        coding: ContentCoding? = nil
    ) -> PartLogCodec.State {
        PartLogCodec.State(
            size: size ?? self.size, partSize: 5 * mib, region: region, uploadID: uploadID, url: url ?? self.url, parts: parts, coding: coding)
    }

    private func xml(_ text: String, status: Int = 200) -> UploadOutcome {
        var answer = HTTPAnswer(status: status, excerpt: text)
        answer.body = Array(text.utf8)
        return .answered(answer)
    }

    private func created(_ id: String = "u1") -> UploadOutcome {
        xml("<InitiateMultipartUploadResult><UploadId>\(id)</UploadId></InitiateMultipartUploadResult>")
    }

    private func partAnswer(_ etag: String?) -> UploadOutcome {
        var answer = HTTPAnswer(status: 200)
        answer.etag = etag
        return .answered(answer)
    }

    private func listing(_ parts: [Int: String], next: Int? = nil) -> UploadOutcome {
        let body = parts.keys.sorted().map { "<Part><PartNumber>\($0)</PartNumber><ETag>\(parts[$0]!)</ETag></Part>" }.joined()
        let truncated = next.map { "<IsTruncated>true</IsTruncated><NextPartNumberMarker>\($0)</NextPartNumberMarker>" } ?? "<IsTruncated>false</IsTruncated>"
        return xml("<ListPartsResult>\(truncated)\(body)</ListPartsResult>")
    }

    private func s3Error(_ status: Int, _ code: String) -> UploadOutcome {
        xml("<Error><Code>\(code)</Code><Message>m</Message></Error>", status: status)
    }

    private func head(size: Int64?, etag: String?, status: Int = 200) -> UploadOutcome {
        var answer = HTTPAnswer(status: status)
        answer.contentLength = size
        answer.etag = etag
        return .answered(answer)
    }

    private let dropped = UploadOutcome.failed(.unidentified("connection lost mid-request", beforeSending: false))
    private let refusedBeforeSending = UploadOutcome.failed(.unidentified("connection refused", beforeSending: true))

    /// An upload past CreateMultipartUpload and its record: the first parts asked for.
    private func sending(journaled: Bool = true, concurrency: Int = 2) -> S3MultipartUpload {
        var upload = upload(journaled: journaled, concurrency: concurrency)
        XCTAssertEqual(upload.start(recorded: nil), [.createUpload])
        let next = upload.answered(.create, created())
        if journaled { XCTAssertEqual(upload.recorded(.uploadID).count, concurrency) } else { XCTAssertEqual(next.count, concurrency) }
        return upload
    }

    /// An upload with every part sent and recorded: CompleteMultipartUpload asked for.
    private func completing() -> S3MultipartUpload {
        var upload = sending(concurrency: 3)
        for n in 1...3 {
            XCTAssertEqual(upload.answered(.part(n), partAnswer(etags[n])), [.recordPart(n, etag: etags[n]!)])
            let next = upload.recorded(.part(n))
            XCTAssertEqual(next, n == 3 ? [.complete(etags: ["\"e1\"", "\"e2\"", "\"e3\""])] : [])
        }
        return upload
    }

    private func failure(_ actions: [S3MultipartUpload.Action], file: StaticString = #filePath, line: UInt = #line) -> UploadOutcome? {
        guard case .fail(let outcome)? = actions.last else {
            XCTFail("expected the attempt to fail: \(actions)", file: file, line: line)
            return nil
        }
        return outcome
    }

    private func startOver(_ actions: [S3MultipartUpload.Action], file: StaticString = #filePath, line: UInt = #line) -> S3MultipartUpload.StartOver? {
        guard case .startOver(let over)? = actions.last else {
            XCTFail("expected a start-over: \(actions)", file: file, line: line)
            return nil
        }
        return over
    }

    private func checked(_ actions: [S3MultipartUpload.Action]) -> MultipartCompletionCheck.Decision? {
        for case .say(.completionChecked(let check)) in actions { return check.decision }
        return nil
    }

    // MARK: Start

    func testStart_withoutRecord_createsTheUpload() {
        var upload = upload()
        XCTAssertEqual(upload.start(recorded: nil), [.createUpload])
        XCTAssertNil(upload.uploadID)
    }

    func testStart_withRecordOfThisObject_listsItsParts() {
        var upload = upload()
        XCTAssertEqual(upload.start(recorded: record(parts: [1: "\"e1\""])), [.listParts(marker: 0)])
        XCTAssertEqual(upload.uploadID, "u0")
    }

    func testStart_withRecordOfAnotherObject_startsOverOwingItsAbort() {
        for other in [record(url: url + "x", parts: [1: "\"e1\""]), record(region: "eu-west-1"), record(size: size + 1)] {
            var upload = upload()
            let over = startOver(upload.start(recorded: other))
            XCTAssertEqual(over?.reason, .objectChanged)
            XCTAssertEqual(over?.old, other)
            XCTAssertEqual(over?.owesAbort, true)
            XCTAssertEqual(over?.discardedParts, other.parts.count)
            XCTAssertEqual(over?.discardedBytes, other.parts.isEmpty ? 0 : 5 * mib)
            XCTAssertTrue(over?.detail.contains("written for another object") == true)
            XCTAssertEqual(upload.startedOver(), [.createUpload])
        }
    }

    /// Parts sent compressed and plain ones make no object anyone can read: a log whose coding
    /// is not the request's is another object's; one in the same coding is resumed.
    func testStart_withRecordInAnotherCoding_startsOver() {
        for (recorded, coding) in [(ContentCoding?.none, ContentCoding?.some(.gzip)), (.gzip, nil)] {
            var upload = upload(coding: coding)
            let old = record(parts: [1: "\"e1\""], coding: recorded)
            let over = startOver(upload.start(recorded: old))
            XCTAssertEqual(over?.reason, .objectChanged)
            XCTAssertEqual(over?.old, old)
            XCTAssertEqual(over?.owesAbort, true)
            XCTAssertEqual(over?.discardedParts, 1)
            XCTAssertEqual(over?.detail.hasSuffix("\(size) B, parts in gzip)"), recorded != nil, over?.detail ?? "")
            XCTAssertEqual(upload.startedOver(), coding.map { [.planUpload($0)] } ?? [.createUpload])
        }
        var same = upload(coding: .gzip)
        XCTAssertEqual(same.start(recorded: record(parts: [1: "\"e1\""], coding: .gzip)), [.listParts(marker: 0)])
        XCTAssertEqual(same.plan, S3PartPlan(size: size, preferredPartSize: 5 * mib), "the log's plan, not a new one")
    }

    /// A new compressed upload is planned from how the blob compresses (parts that compress to
    /// about the preferred size), at its creation and again after a start-over, and its record
    /// names the coding.
    func testCreate_compressed_plansFromTheSampledRatio_andRecordsTheCoding() {
        var upload = upload(coding: .gzip)
        XCTAssertEqual(upload.start(recorded: nil), [.planUpload(.gzip)])
        XCTAssertEqual(upload.answered(.create, created("u1")), [], "not created yet")
        XCTAssertEqual(upload.planned(compressedRatio: 0.25), [.createUpload])
        let partSize = S3PartPlan.compressedPartSize(preferredPartSize: 5 * mib, compressedRatio: 0.25)
        XCTAssertEqual(partSize, 22 * mib)
        XCTAssertEqual(upload.plan, S3PartPlan(size: size, preferredPartSize: partSize))
        XCTAssertEqual(
            upload.answered(.create, created("u1")),
            [.recordUploadID(PartLogCodec.State(size: size, partSize: partSize, region: "us-east-1", uploadID: "u1", url: url, coding: .gzip))])
        XCTAssertEqual(upload.recorded(.uploadID), [.sendPart(1, offset: 0, length: size)], "one part")
        XCTAssertEqual(upload.planned(compressedRatio: 0.5), [], "planned once")

        // After a start-over: planned again, from a new sample.
        var again = self.upload(coding: .gzip)
        _ = again.start(recorded: record(coding: nil))
        XCTAssertEqual(again.startedOver(), [.planUpload(.gzip)])
        XCTAssertEqual(again.planned(compressedRatio: 1), [.createUpload])
        XCTAssertEqual(again.plan, S3PartPlan(size: size, preferredPartSize: 5 * mib), "does not shrink: as preferred")
    }

    // MARK: CreateMultipartUpload

    func testCreated_journaled_recordsTheUploadIDBeforeAnyPart() {
        var upload = upload()
        _ = upload.start(recorded: nil)
        XCTAssertEqual(
            upload.answered(.create, created("u1")),
            [.recordUploadID(PartLogCodec.State(size: size, partSize: 5 * mib, region: "us-east-1", uploadID: "u1", url: url))])
        XCTAssertEqual(upload.recorded(.uploadID), [.sendPart(1, offset: 0, length: 5 * mib), .sendPart(2, offset: 5 * mib, length: 5 * mib)])
    }

    func testCreated_withoutLog_sendsPartsAtOnce() {
        var upload = upload(journaled: false, concurrency: 4)
        _ = upload.start(recorded: nil)
        XCTAssertEqual(
            upload.answered(.create, created()),
            [.sendPart(1, offset: 0, length: 5 * mib), .sendPart(2, offset: 5 * mib, length: 5 * mib), .sendPart(3, offset: 10 * mib, length: 2 * mib)])
    }

    func testCreated_withoutUploadID_failsRetryable() {
        var upload = upload()
        _ = upload.start(recorded: nil)
        let outcome = failure(upload.answered(.create, xml("<InitiateMultipartUploadResult/>")))
        XCTAssertEqual(outcome?.class, .retryable)
        XCTAssertEqual(outcome?.httpStatus, 200, "the store's own answer, no status made up")
        XCTAssertTrue(upload.isFinished)
    }

    func testCreate_failedOrRefusedOrCancelled_endsTheAttemptWithIt() {
        for outcome in [s3Error(500, "InternalError"), refusedBeforeSending, .refusal(.blobChanged, "changed"), .cancelled] {
            var upload = upload()
            _ = upload.start(recorded: nil)
            XCTAssertEqual(upload.answered(.create, outcome), [.fail(outcome.withoutBody)], "\(outcome)")
        }
    }

    func testUploadIDNotRecorded_abortsTheUpload() {
        var upload = upload()
        _ = upload.start(recorded: nil)
        _ = upload.answered(.create, created("u1"))
        let actions = upload.recordRefused(.uploadID, PartJournalRefusal("too long"))
        XCTAssertEqual(actions.first, .abort(uploadID: "u1", url: url), "unrecorded, it could never be resumed")
        XCTAssertEqual(failure(actions)?.class, .retryable)
    }

    // MARK: Parts

    func testParts_goUpConcurrencyAtOnce_eachRecordedBeforeItCounts_thenComplete() {
        var upload = sending(concurrency: 2)
        XCTAssertEqual(upload.answered(.part(2), partAnswer("\"e2\"")), [.recordPart(2, etag: "\"e2\"")])
        XCTAssertEqual(upload.done, [:], "not counted before it is recorded")
        XCTAssertEqual(upload.recorded(.part(2)), [.sendPart(3, offset: 10 * mib, length: 2 * mib)])
        XCTAssertEqual(upload.done, [2: "\"e2\""])
        XCTAssertEqual(upload.answered(.part(3), partAnswer("\"e3\"")), [.recordPart(3, etag: "\"e3\"")])
        XCTAssertEqual(upload.recorded(.part(3)), [], "part 1 is still in flight")
        XCTAssertEqual(upload.answered(.part(1), partAnswer("\"e1\"")), [.recordPart(1, etag: "\"e1\"")])
        XCTAssertEqual(upload.recorded(.part(1)), [.complete(etags: ["\"e1\"", "\"e2\"", "\"e3\""])])
    }

    func testParts_answeredTogether_completeOnlyOnceEveryOneIsRecorded() {
        var upload = sending(concurrency: 3)
        for n in 1...3 { XCTAssertEqual(upload.answered(.part(n), partAnswer(etags[n])), [.recordPart(n, etag: etags[n]!)]) }
        XCTAssertEqual(upload.recorded(.part(1)), [])
        XCTAssertEqual(upload.recorded(.part(2)), [], "part 3 is not recorded yet")
        XCTAssertEqual(upload.recorded(.part(3)), [.complete(etags: ["\"e1\"", "\"e2\"", "\"e3\""])])
    }

    func testParts_withoutLog_countAtOnce() {
        var upload = sending(journaled: false, concurrency: 2)
        XCTAssertEqual(upload.answered(.part(1), partAnswer("\"e1\"")), [.sendPart(3, offset: 10 * mib, length: 2 * mib)])
        XCTAssertEqual(upload.done, [1: "\"e1\""])
    }

    func testPart_withoutETag_failsRetryable_keepingTheUpload() {
        var upload = sending()
        let actions = upload.answered(.part(1), partAnswer(nil))
        XCTAssertEqual(actions.count, 1, "with a log, the upload is kept for the next attempt: \(actions)")
        XCTAssertEqual(failure(actions)?.class, .retryable)
        XCTAssertTrue(failure(actions)?.summary.contains("UploadPart 1 answered without an ETag") == true)
        XCTAssertEqual(upload.answered(.part(2), partAnswer("\"e2\"")), [], "the other part's answer after the end")
    }

    func testPart_failed_endsTheAttempt_withoutLogAbortsTheUpload() {
        var journaled = sending()
        XCTAssertEqual(journaled.answered(.part(1), s3Error(500, "InternalError")), [.fail(s3Error(500, "InternalError").withoutBody)])
        var unjournaled = sending(journaled: false)
        XCTAssertEqual(
            unjournaled.answered(.part(2), dropped), [.abort(uploadID: "u1", url: url), .fail(dropped)],
            "without a log no later attempt could resume it")
    }

    /// A record the log refuses is the store's answer at fault (the spool failing is the
    /// daemon's: it stops, and the machine never hears of it).
    func testPart_refusedByTheLog_isTheStoresFault() {
        var upload = sending()
        _ = upload.answered(.part(1), partAnswer("\"e1\""))
        let refused = failure(upload.recordRefused(.part(1), PartJournalRefusal("the ETag is too long to record")))
        XCTAssertEqual(refused?.errorText, "cannot record part 1: the ETag is too long to record")
        XCTAssertEqual(refused?.class, .retryable)
    }

    func testEvents_outOfTurn_doNothing() {
        var upload = sending()
        XCTAssertEqual(upload.answered(.part(3), partAnswer("\"e3\"")), [], "part 3 was not sent")
        XCTAssertEqual(upload.answered(.complete, partAnswer(nil)), [])
        XCTAssertEqual(upload.recorded(.part(1)), [], "part 1 was not answered")
        XCTAssertEqual(upload.recorded(.uploadID), [])
        XCTAssertEqual(upload.startedOver(), [])
        XCTAssertEqual(upload.contentHashed(md5: [], size: 0), [])
        XCTAssertEqual(upload.planned(compressedRatio: 0.5), [])
        XCTAssertEqual(upload.contentUnreadable("x"), [])
    }

    // MARK: Cancel

    func testCancel_endsCancelled_keepingEvenAnUnloggedUpload() {
        var upload = sending(journaled: false)
        XCTAssertEqual(upload.cancel(), [.fail(.cancelled)])
        XCTAssertEqual(upload.cancel(), [], "once")
        XCTAssertEqual(upload.answered(.part(1), partAnswer("\"e1\"")), [])
    }

    // MARK: Resume

    func testResume_keepsPartsBothLogAndStoreHold_sendsTheRest() {
        var upload = upload()
        _ = upload.start(recorded: record(parts: [1: "\"e1\"", 2: "\"e2\""]))
        // Part 2 is listed with another ETag: only the log's and the store's agreement counts.
        let actions = upload.answered(.listParts(marker: 0), listing([1: "&quot;e1&quot;", 2: "\"other\"", 3: "\"e3\""]))
        XCTAssertEqual(actions, [
            .say(.resumed(.init(uploadID: "u0", partCount: 3, listed: 3, recorded: 2, kept: 1, bytesToSend: 7 * mib))),
            .sendPart(2, offset: 5 * mib, length: 5 * mib), .sendPart(3, offset: 10 * mib, length: 2 * mib),
        ])
        XCTAssertEqual(upload.done, [1: "\"e1\""])
    }

    func testResume_everyPartKept_completesAtOnce() {
        var upload = upload()
        _ = upload.start(recorded: record(parts: etags))
        let actions = upload.answered(.listParts(marker: 0), listing(etags))
        XCTAssertEqual(actions.last, .complete(etags: ["\"e1\"", "\"e2\"", "\"e3\""]))
    }

    func testListing_readsEveryPage_butNoPagePastThePlan() {
        var upload = upload()
        _ = upload.start(recorded: record(parts: etags))
        XCTAssertEqual(upload.answered(.listParts(marker: 0), listing([1: "\"e1\""], next: 1)), [.listParts(marker: 1)])
        XCTAssertEqual(upload.answered(.listParts(marker: 0), listing([:])), [], "an answer to a page no longer asked")
        XCTAssertEqual(upload.answered(.listParts(marker: 1), listing([2: "\"e2\""], next: 2)), [.listParts(marker: 2)])
        // "Truncated" again, from a marker at the plan's last part: nothing of ours can follow.
        let actions = upload.answered(.listParts(marker: 2), listing([3: "\"e3\""], next: 3))
        XCTAssertEqual(actions.last, .complete(etags: ["\"e1\"", "\"e2\"", "\"e3\""]))
        guard case .say(.resumed(let resume)) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(resume.listed, 3)
    }

    func testResume_uploadGone_someParts_startsOverWithoutAbort() {
        var upload = upload()
        let old = record(parts: [1: "\"e1\""])
        _ = upload.start(recorded: old)
        let over = startOver(upload.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload")))
        XCTAssertEqual(over?.reason, .uploadGone)
        XCTAssertEqual(over?.owesAbort, false, "the store no longer has it")
        XCTAssertEqual(over?.old, old)
        XCTAssertEqual(over?.discardedBytes, 5 * mib)
        XCTAssertEqual(upload.startedOver(), [.createUpload])
        XCTAssertNil(upload.uploadID)
    }

    func testResume_uploadGone_everyPartRecorded_asksHeadOfTheKey() {
        var upload = upload()
        _ = upload.start(recorded: record(parts: etags))
        XCTAssertEqual(upload.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload")), [.headObject])
        let actions = upload.answered(.headObject, head(size: size, etag: "\"abc-3\""))
        guard case .completed? = checked(actions) else { return XCTFail("\(actions)") }
        guard case .finish(let outcome)? = actions.last else { return XCTFail("\(actions)") }
        XCTAssertEqual(outcome.class, .success)
    }

    func testResume_listingFails_endsTheAttempt() {
        var upload = upload()
        _ = upload.start(recorded: record())
        XCTAssertEqual(upload.answered(.listParts(marker: 0), s3Error(500, "InternalError")), [.fail(s3Error(500, "InternalError").withoutBody)])
    }

    // MARK: CompleteMultipartUpload

    func testComplete_answered_isTheItemsSuccess() {
        var upload = completing()
        let answer = xml("<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>")
        XCTAssertEqual(upload.answered(.complete, answer), [.finish(.status(200, excerpt: answer.responseExcerpt))])
        XCTAssertTrue(upload.isFinished)
    }

    func testComplete_inDoubt_asksListParts() {
        let doubtful: [UploadOutcome] = [s3Error(200, "InternalError"), s3Error(503, "ServiceUnavailable"), dropped]
        for outcome in doubtful {
            var upload = completing()
            XCTAssertEqual(upload.answered(.complete, outcome), [.listParts(marker: 0)], "\(outcome)")
        }
    }

    func testComplete_clearNo_endsTheAttempt() {
        for outcome in [s3Error(400, "EntityTooSmall"), refusedBeforeSending] {
            var upload = completing()
            XCTAssertEqual(upload.answered(.complete, outcome), [.fail(outcome)], "\(outcome)")
        }
    }

    func testCompletionChecked_uploadStillOpen_retriesLater() {
        var upload = completing()
        _ = upload.answered(.complete, dropped)
        let actions = upload.answered(.listParts(marker: 0), listing(etags))
        guard case .retryLater? = checked(actions) else { return XCTFail("\(actions)") }
        XCTAssertEqual(failure(actions), dropped)
    }

    func testCompletionChecked_listingUnclear_retriesLater() {
        var upload = completing()
        _ = upload.answered(.complete, dropped)
        let actions = upload.answered(.listParts(marker: 0), s3Error(500, "InternalError"))
        guard case .retryLater(let why)? = checked(actions) else { return XCTFail("\(actions)") }
        XCTAssertTrue(why.contains("ListParts answered HTTP 500"), why)
        XCTAssertEqual(failure(actions), dropped)
    }

    func testCompletionChecked_uploadGone_headDecides() {
        // The object of these parts at the key: uploaded.
        var found = completing()
        _ = found.answered(.complete, dropped)
        XCTAssertEqual(found.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload")), [.headObject])
        guard case .finish? = found.answered(.headObject, head(size: size, etag: "\"abc-3\"")).last else { return XCTFail() }

        // No object: a new upload, nothing owed.
        var absent = completing()
        _ = absent.answered(.complete, dropped)
        _ = absent.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload"))
        let actions = absent.answered(.headObject, head(size: nil, etag: nil, status: 404))
        guard case .startOver? = checked(actions) else { return XCTFail("\(actions)") }
        XCTAssertEqual(startOver(actions)?.owesAbort, false)
        XCTAssertEqual(startOver(actions)?.discardedParts, 3)
        XCTAssertEqual(startOver(actions)?.discardedBytes, size)

        // Another object (another size): a new upload.
        var other = completing()
        _ = other.answered(.complete, dropped)
        _ = other.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload"))
        XCTAssertNotNil(startOver(other.answered(.headObject, head(size: 1, etag: "\"abc-3\""))))

        // HEAD unclear: retried later.
        var unclear = completing()
        _ = unclear.answered(.complete, dropped)
        _ = unclear.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload"))
        let unclearActions = unclear.answered(.headObject, head(size: nil, etag: nil, status: 500))
        guard case .retryLater? = checked(unclearActions) else { return XCTFail("\(unclearActions)") }
        XCTAssertEqual(failure(unclearActions), dropped)
    }

    func testComplete_noSuchUpload_asksHead() {
        var upload = completing()
        XCTAssertEqual(upload.answered(.complete, s3Error(404, "NoSuchUpload")), [.headObject])
    }

    func testHead_md5ShapedETag_hashesTheBlob() {
        let md5: [UInt8] = Array(repeating: 0xab, count: 16)
        let md5Text = String(repeating: "ab", count: 16)
        var same = completing()
        _ = same.answered(.complete, s3Error(404, "NoSuchUpload"))
        XCTAssertEqual(same.answered(.headObject, head(size: size, etag: "\"\(md5Text)\"")), [.hashContent(.blob)])
        guard case .completed? = checked(same.contentHashed(md5: md5, size: size)) else { return XCTFail() }

        var another = completing()
        _ = another.answered(.complete, s3Error(404, "NoSuchUpload"))
        _ = another.answered(.headObject, head(size: size, etag: "\"\(md5Text)\""))
        XCTAssertNotNil(startOver(another.contentHashed(md5: Array(repeating: 0xcd, count: 16), size: size)))

        var unreadable = completing()
        _ = unreadable.answered(.complete, s3Error(404, "NoSuchUpload"))
        _ = unreadable.answered(.headObject, head(size: size, etag: "\"\(md5Text)\""))
        XCTAssertEqual(unreadable.contentUnreadable("the blob changed"), [.fail(.refusal(.blobChanged, "the blob changed"))])
    }

    /// A compressed upload's object is its parts' gzip members: whatever HEAD's ETag looks like,
    /// the parts are compressed again to learn the object's size and MD5, which decide.
    func testHead_compressedUpload_hashesTheCodedParts() {
        let etagOfParts = "\"\(MultipartCompletionCheck.multipartETag(of: ["\"\(String(repeating: "1", count: 32))\"", "\"\(String(repeating: "2", count: 32))\"", "\"\(String(repeating: "3", count: 32))\""])!)\""
        let codedSize: Int64 = 11 * mib
        func completingCompressed() -> S3MultipartUpload {
            var upload = upload(concurrency: 3, coding: .gzip)
            _ = upload.start(recorded: nil)
            _ = upload.planned(compressedRatio: 1)
            _ = upload.answered(.create, created())
            _ = upload.recorded(.uploadID)
            for n in 1...3 {
                let etag = "\"\(String(repeating: "\(n)", count: 32))\""
                _ = upload.answered(.part(n), partAnswer(etag))
                _ = upload.recorded(.part(n))
            }
            XCTAssertEqual(upload.answered(.complete, s3Error(404, "NoSuchUpload")), [.headObject])
            return upload
        }
        var found = completingCompressed()
        let plan = found.plan
        XCTAssertEqual(found.answered(.headObject, head(size: codedSize, etag: etagOfParts)), [.hashContent(.codedParts(plan, .gzip))])
        let actions = found.contentHashed(md5: Array(repeating: 0xab, count: 16), size: codedSize)
        guard case .completed? = checked(actions), case .finish? = actions.last else { return XCTFail("\(actions)") }

        // The object at the key is not what the parts make compressed: a new upload.
        var other = completingCompressed()
        _ = other.answered(.headObject, head(size: codedSize, etag: etagOfParts))
        XCTAssertNotNil(startOver(other.contentHashed(md5: Array(repeating: 0xab, count: 16), size: codedSize + 1)))

        // The blob cannot be read to compress it again: the item's refusal.
        var unreadable = completingCompressed()
        _ = unreadable.answered(.headObject, head(size: codedSize, etag: etagOfParts))
        XCTAssertEqual(unreadable.contentUnreadable("the blob changed"), [.fail(.refusal(.blobChanged, "the blob changed"))])
    }

    // MARK: InvalidPart

    func testInvalidPart_partsTheStoreLacks_sentAgainOnce() {
        var upload = completing()
        XCTAssertEqual(upload.answered(.complete, s3Error(400, "InvalidPart")), [.listParts(marker: 0)])
        XCTAssertEqual(
            upload.answered(.listParts(marker: 0), listing([1: "\"e1\"", 3: "\"e3\""])), [.sendPart(2, offset: 5 * mib, length: 5 * mib)])
        XCTAssertEqual(upload.answered(.part(2), partAnswer("\"e2b\"")), [.recordPart(2, etag: "\"e2b\"")])
        XCTAssertEqual(upload.recorded(.part(2)), [.complete(etags: ["\"e1\"", "\"e2b\"", "\"e3\""])])
        // Refused again: once per attempt; a new upload, the old one's abort owed.
        XCTAssertEqual(upload.answered(.complete, s3Error(400, "InvalidPart")), [.listParts(marker: 0)])
        let over = startOver(upload.answered(.listParts(marker: 0), listing([1: "\"e1\"", 3: "\"e3\""])))
        XCTAssertEqual(over?.reason, .completionRefused)
        XCTAssertEqual(over?.owesAbort, true)
        XCTAssertEqual(over?.old?.uploadID, "u1")
        XCTAssertTrue(over?.detail.contains("again after parts [2] were sent again") == true, over?.detail ?? "")
    }

    func testInvalidPart_everyPartListed_startsOver() {
        var upload = completing()
        _ = upload.answered(.complete, s3Error(400, "InvalidPart"))
        let over = startOver(upload.answered(.listParts(marker: 0), listing(etags)))
        XCTAssertEqual(over?.owesAbort, true)
        XCTAssertTrue(over?.detail.contains("although ListParts lists every part as sent") == true)
    }

    func testInvalidPart_uploadGone_startsOverOwingNothing() {
        var upload = completing()
        _ = upload.answered(.complete, s3Error(400, "InvalidPart"))
        let over = startOver(upload.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload")))
        XCTAssertEqual(over?.reason, .completionRefused)
        XCTAssertEqual(over?.owesAbort, false)
    }

    // MARK: Starting over

    func testStartOver_once_thenTheAnswerEndsTheAttempt() {
        var upload = upload()
        _ = upload.start(recorded: record(parts: [1: "\"e1\""]))
        _ = upload.answered(.listParts(marker: 0), s3Error(404, "NoSuchUpload"))
        XCTAssertEqual(upload.startedOver(), [.createUpload])
        _ = upload.answered(.create, created("u2"))
        _ = upload.recorded(.uploadID)
        for n in 1...2 {
            _ = upload.answered(.part(n), partAnswer(etags[n]))
            _ = upload.recorded(.part(n))
        }
        _ = upload.answered(.part(3), partAnswer(etags[3]))
        XCTAssertEqual(upload.recorded(.part(3)).last, .complete(etags: ["\"e1\"", "\"e2\"", "\"e3\""]))
        _ = upload.answered(.complete, s3Error(400, "InvalidPart"))
        let gone = s3Error(404, "NoSuchUpload")
        XCTAssertEqual(
            upload.answered(.listParts(marker: 0), gone), [.fail(s3Error(400, "InvalidPart").withoutBody)],
            "a store that loses every upload does not keep the attempt going")
    }

    func testStartOver_withoutLog_abortsTheOldUploadAtOnce() {
        var upload = upload(journaled: false, concurrency: 3)
        _ = upload.start(recorded: nil)
        _ = upload.answered(.create, created("u1"))
        for n in 1...3 { _ = upload.answered(.part(n), partAnswer(etags[n])) }
        _ = upload.answered(.complete, s3Error(400, "InvalidPart"))
        let actions = upload.answered(.listParts(marker: 0), listing(etags))
        XCTAssertEqual(actions.first, .abort(uploadID: "u1", url: url))
        XCTAssertEqual(startOver(actions)?.owesAbort, false, "nothing to record it in")
    }

    /// What the part log records of a start-over: the old upload's abort owed when it may still
    /// exist and the item has a log, with the note the daemon says.
    func testStartOver_record_owesTheOldUploadsAbort_onlyWhenItMayStillExist() throws {
        var upload = upload()
        let old = record(url: url + "x")
        let over = try XCTUnwrap(startOver(upload.start(recorded: old)))
        XCTAssertEqual(over.record, StartOverRecord(owing: .s3(old), note: over.note))
        let owed = over.record.owed(by: ItemID("20261121T141003123Z-0000-9f3ab2c1-p")!, since: Timestamp(millisecondsSinceEpoch: 5))
        XCTAssertEqual(owed?.uploadID, old.uploadID)
        XCTAssertEqual(owed?.kind, .s3Multipart)

        var unlogged = self.upload(journaled: false)
        let none = try XCTUnwrap(startOver(unlogged.start(recorded: old)))
        XCTAssertNil(none.record.owing, "nothing to record it in: aborted at once")
    }

    func testStartOverNote_saysTheReasonAndTheBytes() {
        let over = S3MultipartUpload.StartOver(
            reason: .uploadGone, detail: "d", old: record(uploadID: "old"), discardedParts: 2, discardedBytes: 10, owesAbort: false)
        XCTAssertEqual(over.note, .startedOver(.init(reason: .uploadGone, detail: "d", oldUploadID: "old", discardedParts: 2, discardedBytes: 10)))
    }

    // MARK: Rules

    func testSaysGone_onlyNoSuchUpload404AndInvalidPart400() {
        XCTAssertTrue(S3MultipartUpload.saysGone(status: 404, code: "NoSuchUpload"))
        XCTAssertTrue(S3MultipartUpload.saysGone(status: 400, code: "InvalidPart"))
        XCTAssertFalse(S3MultipartUpload.saysGone(status: 404, code: "NoSuchKey"))
        XCTAssertFalse(S3MultipartUpload.saysGone(status: 500, code: "NoSuchUpload"))
    }

    func testStartOverBudget_oncePerAttempt() {
        var budget = StartOverBudget()
        XCTAssertNil(budget.spend(after: nil, detail: "first"))
        XCTAssertEqual(budget.spend(after: .status(404), detail: "again"), .status(404))
        XCTAssertEqual(budget.spend(after: nil, detail: "again")?.class, .retryable)
    }
}

