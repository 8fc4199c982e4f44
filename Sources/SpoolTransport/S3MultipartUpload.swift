import Dispatch
import SpoolCore

/// One attempt of an S3 multipart upload, resumed from the item's part log when it has one
/// (progress that outlives an attempt, durable before it counts). Every step goes through the HTTP transport the daemon chose
/// (`URLSessionTransport` or `CurlTransport`): a part is a byte range of the attempt's blob, the
/// XML steps send a few bytes of their own; no redirect is followed, the answer is kept up to
/// `answerKeep` bytes (cut at 1 MiB), and each request has the transport's deadline.
///
/// - A log for this blob and object: ListParts (every page) checks that the upload still exists.
///   Parts in the log that the store also lists are done and never sent again; the others are
///   sent (`MultipartNote.resumed` says how many of each). NoSuchUpload: if the log records
///   every part, a completion may have happened before spoold stopped, so HEAD of the key decides
///   (`MultipartCompletionCheck`); otherwise, or if the object is not there, a new upload starts.
/// - No log (or one for another object, whose upload is then given up): CreateMultipartUpload,
///   and the upload id is recorded (fsynced) before the first part is sent.
/// - Parts go up `concurrency` at once, each hashed (its SigV4 payload hash, read 1 MiB at a time)
///   and then streamed from the blob's descriptor: memory stays flat whatever the part size.
///   A part counts once its ETag is recorded (fsynced) in the log; a crash re-sends at most the
///   parts in flight.
/// - All parts done: CompleteMultipartUpload with every part's ETag from the log.
///   - An answer that does not say whether the object was made (a 5xx, the connection dropped or
///     the deadline passed after the request went out, an error inside a 200; NoSuchUpload) is
///     checked with the store before anything is decided: ListParts, then HEAD of the key
///     (`MultipartCompletionCheck`). The object there: the item is uploaded. The upload still
///     open, or no clear answer: the attempt ends retryable and the next resumes.
///   - `InvalidPart` (the store will not complete with these parts): ListParts again. Parts it
///     lacks or lists with another ETag are sent again and the completion repeated, once per
///     attempt; if it lists every part as sent, or no longer has the upload, a new upload starts.
///
/// Starting over (`startOver`) throws the old upload's parts away: at most once per attempt, and
/// each time said (`MultipartNote.startedOver`, with the reason and the bytes). An old upload
/// that may still exist is given up: its abort is recorded as owed in the spool before its log
/// goes (`PartJournal.oweAbort`), and the daemon sends it (`MultipartNote.abortOwed`).
///
/// A step the store throttles (`SlowDown`, 429...) is sent again within the attempt, not failed:
/// every step takes a token of the daemon's request rate (`RequestPacer`; the first was taken by
/// the item's claim) and tells it each answer, so a throttled part waits for the lowered rate.
/// The first part (or step) that fails otherwise ends the attempt: the parts still in flight are cancelled
/// and the upload is kept for the next attempt. Without a log (`request.partJournal` nil), a
/// failed attempt aborts its upload instead (best effort: nothing records it). Everything here
/// runs on `work`, one serial queue, so a part is never recorded after the attempt has reported.
final class S3MultipartUpload: @unchecked Sendable {
    /// Parts asked for per ListParts page: its answer fits `answerKeep`.
    static let listPage = 500
    /// Bytes of an answer kept for its XML: a ListParts page of `listPage` parts.
    static let answerKeep = 256 * 1024

    private let request: UploadRequest
    private let preferredPartSize: Int64
    private let concurrency: Int
    private let transport: any UploadTransport
    private let signer: SigV4Signer
    private let clock: any Clock
    private let deadlineSeconds: Double
    private let work: DispatchQueue
    private let journal: (any PartJournal)?
    private let completion: @Sendable (UploadOutcome) -> Void
    /// The daemon's request rate; nil paces nothing.
    private let pacer: RequestPacer?

    // Only touched on `work`.
    private var plan: S3PartPlan
    private var uploadID: String?
    private var done: [Int: String] = [:]
    private var waiting: [Int] = []
    /// Requests in flight: part number (0 for the other steps) → how to cancel it.
    private var inFlight: [Int: RequestCancellation] = [:]
    private var finished = false
    /// The attempt already started over once (`startOver`): a second time, it fails instead.
    private var startedOver = false
    /// Parts were sent again after an `InvalidPart` completion: a second one starts over.
    private var repairedCompletion = false
    /// The first request's token was taken by the item's claim.
    private var firstPaid = true

    init(
        _ request: UploadRequest, preferredPartSize: Int64, concurrency: Int, transport: any UploadTransport, signer: SigV4Signer,
        clock: any Clock, deadlineSeconds: Double, work: DispatchQueue, pacer: RequestPacer? = nil,
        completion: @escaping @Sendable (UploadOutcome) -> Void
    ) {
        (self.request, self.preferredPartSize, self.concurrency, self.transport) = (request, preferredPartSize, concurrency, transport)
        self.pacer = pacer
        (self.signer, self.clock, self.deadlineSeconds, self.work) = (signer, clock, deadlineSeconds, work)
        self.journal = request.partJournal
        self.completion = completion
        plan = S3PartPlan(size: request.size, preferredPartSize: preferredPartSize)
    }

    /// On `work`.
    func start() {
        guard let recorded = journal?.load() else {
            create()
            return
        }
        guard recorded.size == request.size, recorded.url == request.url, recorded.region == signer.region,
              recorded.coding == request.compression
        else {
            // An upload for another object (the URL, the region, the blob's size or the parts'
            // coding changed: compressed parts and plain ones make no object anyone can read).
            let coding = recorded.coding.map { ", parts in \($0.rawValue)" } ?? ""
            startOver(
                .objectChanged,
                detail: "the part log was written for another object (\(recorded.url), \(recorded.region), \(recorded.size) B\(coding))",
                old: recorded, discarding: recorded.parts, stillExists: true, after: nil)
            return
        }
        plan = recorded.plan
        uploadID = recorded.uploadID
        listParts(marker: 0, listed: [:], unclear: nil) { [self] listing in
            guard case .listed(let listed) = listing else {
                guard case .gone(let answer) = listing else { return }
                let doubt = "the upload its part log records is gone (NoSuchUpload)"
                if recorded.parts.count == plan.partCount {
                    // Every part was recorded: a completion may have happened before spoold stopped.
                    headObject(doubt: doubt + " and every part was recorded", parts: recorded.parts, failing: answer)
                } else {
                    startOver(.uploadGone, detail: doubt, old: recorded, discarding: recorded.parts, stillExists: false, after: answer)
                }
                return
            }
            // Only what the log vouches for counts, and only if the store has it too.
            done = recorded.parts.filter { number, etag in
                listed[number].map { MultipartCompletionCheck.unquoted($0) == MultipartCompletionCheck.unquoted(etag) } ?? false
            }
            let toSend = (1...plan.partCount).filter { done[$0] == nil }.reduce(Int64(0)) { $0 + plan.range(ofPart: $1).length }
            note(.resumed(.init(
                uploadID: recorded.uploadID, partCount: plan.partCount, listed: listed.count, recorded: recorded.parts.count,
                kept: done.count, bytesToSend: toSend)))
            sendParts()
        }
    }

    /// Ends the attempt with `.cancelled` (the daemon is stopping); the upload is kept.
    func cancel() {
        work.async { self.fail(.cancelled, abortUpload: false) }
    }

    private var uploadIDQuery: String { "uploadId=" + URLTemplate.encodePathSegment(uploadID ?? "") }

    /// SSE-C (`x-amz-server-side-encryption-customer-*`): S3 wants the customer's key with every
    /// part and the completion, not only with CreateMultipartUpload, which gets all the item's headers.
    private var customerKeyHeaders: [String: String] {
        request.headers.filter { $0.key.lowercased().hasPrefix("x-amz-server-side-encryption-customer-") }
    }

    // MARK: Steps

    /// The plan of a new upload: parts of the preferred size, or with `--compress` parts that
    /// compress to about that size (`S3PartPlan.compressedPartSize`, from a sample of the blob).
    private func newPlan() -> S3PartPlan {
        guard let coding = request.compression else { return S3PartPlan(size: request.size, preferredPartSize: preferredPartSize) }
        let ratio = S3MultipartUpload.compressedRatio(of: request.body, coding: coding)
        let partSize = S3PartPlan.compressedPartSize(preferredPartSize: preferredPartSize, compressedRatio: ratio)
        return S3PartPlan(size: request.size, preferredPartSize: partSize)
    }

    /// Compressed bytes per byte of the blob, from up to 4 samples of 1 MiB spread over it (each
    /// compressed alone, as a part is); 1 when it cannot be read (the parts then find out why).
    static func compressedRatio(of blob: BlobBody, coding: ContentCoding) -> Double {
        let sample: Int64 = 1 << 20
        let count = Int64(min(4, max(1, blob.size / sample)))
        var (raw, coded): (Int64, Int64) = (0, 0)
        for index in 0..<count {
            let offset = blob.size <= sample ? 0 : (blob.size - sample) * index / max(1, count - 1)
            let length = min(sample, blob.size - offset)
            guard let measured = try? BodyDigest.measure([.blob(blob, offset: offset, length: length)], coding: coding, hashing: nil) else {
                return 1
            }
            (raw, coded) = (raw + length, coded + measured.length)
        }
        return raw > 0 ? Double(coded) / Double(raw) : 1
    }

    private func create() {
        plan = newPlan()
        send(step: 0, method: "POST", query: "uploads=", payload: .bytes([]), contentType: request.contentType, headers: request.headers) {
            [self] answer in
            guard let id = S3PartPlan.element("UploadId", in: S3MultipartUpload.text(of: answer)) else {
                fail(.answered(answer.ruled(.retryable, because: "CreateMultipartUpload answered without an UploadId")), abortUpload: false)
                return
            }
            uploadID = id
            if let journal {
                journal.reached(.created)
                do {
                    try journal.begin(.init(
                        size: plan.size, partSize: plan.partSize, region: signer.region, uploadID: id, url: request.url,
                        coding: request.compression))
                } catch {
                    // Unrecorded, the upload could never be resumed: aborted.
                    fail(S3MultipartUpload.journalFailure(error, what: "the multipart upload", answer: answer), abortUpload: true)
                    return
                }
            }
            sendParts()
        }
    }

    /// What ListParts found.
    private enum Listing {
        /// The parts listed, every page: number → ETag.
        case listed([Int: String])
        /// NoSuchUpload (the answer).
        case gone(UploadOutcome)
    }

    /// Reads every page of ListParts and gives `then` what it found. Any other answer goes to
    /// `unclear` when given, else ends the attempt.
    private func listParts(
        marker: Int, listed: [Int: String], unclear: (@Sendable (UploadOutcome) -> Void)?,
        then: @escaping @Sendable (Listing) -> Void
    ) {
        let query = "max-parts=\(S3MultipartUpload.listPage)&part-number-marker=\(marker)&" + uploadIDQuery
        send(step: 0, method: "GET", query: query, payload: .none, headers: [:], gone: { then(.gone($0)) }, otherwise: unclear) {
            [self] answer in
            var listed = listed
            let text = S3MultipartUpload.text(of: answer)
            for part in S3MultipartUpload.elements("Part", in: text) {
                if let number = S3PartPlan.element("PartNumber", in: part).flatMap(Int.init), let etag = S3PartPlan.element("ETag", in: part) {
                    listed[number] = etag
                }
            }
            // Pages past the plan's last part cannot hold a part of ours: a server that keeps
            // saying "truncated" cannot keep the attempt going.
            if S3PartPlan.element("IsTruncated", in: text) == "true",
               let next = S3PartPlan.element("NextPartNumberMarker", in: text).flatMap(Int.init), next > marker,
               next < plan.partCount
            {
                listParts(marker: next, listed: listed, unclear: unclear, then: then)
                return
            }
            then(.listed(listed))
        }
    }

    private func sendParts() {
        waiting = (1...plan.partCount).filter { done[$0] == nil }
        pump()
    }

    /// Starts parts until `concurrency` are in flight; completes when none is left.
    private func pump() {
        guard !finished else { return }
        while inFlight.count < concurrency, !waiting.isEmpty {
            sendPart(waiting.removeFirst())
            if finished { return }
        }
        if waiting.isEmpty && inFlight.isEmpty { complete() }
    }

    private func sendPart(_ number: Int) {
        let (offset, length) = plan.range(ofPart: number)
        let query = "partNumber=\(number)&" + uploadIDQuery
        send(step: number, method: "PUT", query: query, payload: .range(offset: offset, length: length), headers: customerKeyHeaders) {
            [self] answer in
            guard let etag = answer.etag, !etag.isEmpty else {
                fail(.answered(answer.ruled(.retryable, because: "UploadPart \(number) answered without an ETag")), abortUpload: false)
                return
            }
            do {
                try journal?.record(part: number, etag: etag)
            } catch {
                fail(S3MultipartUpload.journalFailure(error, what: "part \(number)", answer: answer), abortUpload: false)
                return
            }
            done[number] = etag
            pump()
        }
    }

    private func complete() {
        journal?.reached(.completing)
        let etags = (1...plan.partCount).map { done[$0] ?? "" }
        let body = Array(S3PartPlan.completionBody(etags: etags).utf8)
        send(step: 0, method: "POST", query: uploadIDQuery, payload: .bytes(body), contentType: "application/xml", headers: customerKeyHeaders, gone: {
            [self] outcome in
            if S3ErrorClassifier.errorCode(in: outcome.responseExcerpt) == "InvalidPart" {
                completionRefused(outcome)
            } else {
                // NoSuchUpload: completed (by an earlier request of ours?), aborted or expired.
                headObject(doubt: "CompleteMultipartUpload answered NoSuchUpload", parts: done, failing: outcome)
            }
        }, otherwise: { [self] outcome in
            if S3MultipartUpload.leavesCompletionInDoubt(outcome) {
                checkCompletion(doubt: "CompleteMultipartUpload ended without a clear answer (\(outcome.summary))", failing: outcome)
            } else {
                fail(outcome, abortUpload: false)
            }
        }) { [self] answer in
            // S3 may answer 200 and still report an error in the body: then it did not say whether it completed.
            let excerpt = answer.excerpt
            if let code = S3ErrorClassifier.errorCode(in: excerpt), S3PartPlan.element("ETag", in: excerpt ?? "") == nil {
                let doubt = "CompleteMultipartUpload answered HTTP \(answer.status) with S3 error \(code)"
                checkCompletion(doubt: doubt, failing: .answered(HTTPAnswer(status: answer.status, excerpt: excerpt).ruled(.retryable, because: doubt)))
                return
            }
            journal?.reached(.completed)
            finish(.status(answer.status, excerpt: excerpt))
        }
    }

    /// Whether a completion's failed answer leaves open whether the store made the object: a
    /// 5xx, or a request that went out and got no answer (dropped, timed out). A 4xx is a clear no.
    static func leavesCompletionInDoubt(_ outcome: UploadOutcome) -> Bool {
        switch outcome {
        case .answered(let answer): answer.status >= 500
        case .failed(let failure): !failure.beforeSending
        case .refused, .cancelled, .spoolFailure: false
        }
    }

    /// The completion's answer was unclear: ListParts, then (the upload gone) HEAD of the key.
    private func checkCompletion(doubt: String, failing outcome: UploadOutcome) {
        listParts(marker: 0, listed: [:], unclear: { [self] listAnswer in
            decided(MultipartCompletionCheck.afterAmbiguousCompletion(.unclear(listAnswer.summary)), doubt: doubt, failing: outcome)
        }) { [self] listing in
            let gone = if case .gone = listing { true } else { false }
            let decision = MultipartCompletionCheck.afterAmbiguousCompletion(gone ? .gone : .open)
            if decision == .headObject {
                headObject(doubt: doubt, parts: done, failing: outcome)
            } else {
                decided(decision, doubt: doubt, failing: outcome)
            }
        }
    }

    /// The upload is gone: HEAD of the key says whether the store made the object of `parts`.
    private func headObject(doubt: String, parts: [Int: String], failing outcome: UploadOutcome) {
        let expected = MultipartCompletionCheck.Expected(size: plan.size, partETags: (1...plan.partCount).map { parts[$0] ?? "" })
        send(step: 0, method: "HEAD", query: "", payload: .none, headers: customerKeyHeaders, otherwise: { [self] answer in
            let head: MultipartCompletionCheck.Head = answer.httpStatus == 404 ? .absent : .unclear(answer.summary)
            decided(MultipartCompletionCheck.afterHead(head, expected: expected), doubt: doubt, failing: outcome, parts: parts)
        }) { [self] answer in
            let head = MultipartCompletionCheck.Head.found(size: answer.contentLength, etag: answer.etag)
            if let coding = request.compression {
                checkCodedObject(head, coding: coding, parts: parts, doubt: doubt, failing: outcome)
                return
            }
            guard MultipartCompletionCheck.wantsContentMD5(head, expected: expected) else {
                decided(MultipartCompletionCheck.afterHead(head, expected: expected), doubt: doubt, failing: outcome, parts: parts)
                return
            }
            // The store's ETag may be the MD5 of the bytes: read the blob once, off the attempts' queue.
            let body = request.body
            inFlight[0] = RequestCancellation()
            DispatchQueue.global().async { [self] in
                let md5 = try? BodyDigest.md5(of: [.blob(body, offset: 0, length: body.size)])
                work.async { [self] in
                    inFlight[0] = nil
                    guard !finished else { return }
                    guard let md5 else {
                        fail(.refusal(.blobChanged, request.body.failure ?? "cannot read the blob to compare it with the object at the key"), abortUpload: false)
                        return
                    }
                    var withMD5 = expected
                    withMD5.contentMD5 = md5.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
                    decided(MultipartCompletionCheck.afterHead(head, expected: withMD5), doubt: doubt, failing: outcome, parts: parts)
                }
            }
        }
    }

    /// HEAD found an object where a compressed upload's completion is in doubt: the object its
    /// parts make is their gzip members one after another, whose size and MD5 only compressing
    /// them again tells (off the attempts' queue; deterministic, `GzipStream`).
    private func checkCodedObject(
        _ head: MultipartCompletionCheck.Head, coding: ContentCoding, parts: [Int: String], doubt: String, failing outcome: UploadOutcome
    ) {
        let (body, plan) = (request.body, plan)
        inFlight[0] = RequestCancellation()
        DispatchQueue.global().async { [self] in
            let coded = try? S3MultipartUpload.codedObject(of: body, plan: plan, coding: coding)
            work.async { [self] in
                inFlight[0] = nil
                guard !finished else { return }
                guard let coded else {
                    fail(.refusal(.blobChanged, request.body.failure ?? "cannot read the blob to compare it with the object at the key"), abortUpload: false)
                    return
                }
                var expected = MultipartCompletionCheck.Expected(size: coded.size, partETags: (1...plan.partCount).map { parts[$0] ?? "" })
                expected.contentMD5 = coded.md5
                decided(MultipartCompletionCheck.afterHead(head, expected: expected), doubt: doubt, failing: outcome, parts: parts)
            }
        }
    }

    /// The size and MD5 (hex) of the object a compressed upload's parts make, every part
    /// compressed (and padded) as it is sent.
    static func codedObject(of blob: BlobBody, plan: S3PartPlan, coding: ContentCoding) throws -> (size: Int64, md5: String) {
        let md5 = BulkSHA256(md5: true)
        var size: Int64 = 0
        for number in 1...plan.partCount {
            let (offset, length) = plan.range(ofPart: number)
            let padTo = number < plan.partCount ? S3PartPlan.minimumPartSize : 0
            size += try BodyDigest.measure(
                [.blob(blob, offset: offset, length: length)], coding: coding, padTo: padTo, hashing: md5, finalizing: false
            ).length
        }
        return (size, SigV4Signer.hex(try md5.finalize()))
    }

    /// Acts on what the check decided, and says so.
    private func decided(
        _ decision: MultipartCompletionCheck.Decision, doubt: String, failing outcome: UploadOutcome, parts: [Int: String]? = nil
    ) {
        note(.completionChecked(.init(doubt: doubt, uploadID: uploadID ?? "", decision: decision)))
        switch decision {
        case .completed:
            journal?.reached(.completed)
            finish(.status(200, excerpt: "completed (checked with the store after: \(doubt))"))
        case .startOver(let why):
            let discarded = parts ?? done
            startOver(.uploadGone, detail: why, old: nil, discarding: discarded, stillExists: false, after: outcome)
        case .retryLater, .headObject:
            fail(outcome.withoutBody, abortUpload: false)
        }
    }

    /// The store refused the completion (`InvalidPart`): ListParts says what it holds. Parts it
    /// lacks or lists with another ETag are sent again, once per attempt; nothing to mend, or the
    /// upload gone: a new upload.
    private func completionRefused(_ outcome: UploadOutcome) {
        let refused = "CompleteMultipartUpload answered InvalidPart"
        listParts(marker: 0, listed: [:], unclear: nil) { [self] listing in
            guard case .listed(let listed) = listing else {
                startOver(.completionRefused, detail: refused + " and the upload is gone (NoSuchUpload)", old: nil, discarding: done,
                          stillExists: false, after: outcome)
                return
            }
            let resend = MultipartCompletionCheck.partsToResend(listed: listed, sent: done, partCount: plan.partCount)
            guard !resend.isEmpty, !repairedCompletion else {
                let why = resend.isEmpty ? "although ListParts lists every part as sent" : "again after parts \(resend) were sent again"
                startOver(.completionRefused, detail: refused + " " + why, old: nil, discarding: done, stillExists: true, after: outcome)
                return
            }
            repairedCompletion = true
            for number in resend { done[number] = nil }
            sendParts()
        }
    }

    /// Forgets the upload (its log too) and begins a new one, once per attempt; says so, with
    /// the bytes of `discarding` thrown away. An old upload that may `stillExist` is given up:
    /// its abort is recorded as owed first (`old`: the log's record of it, else the current one).
    /// A second time, `after` ends the attempt (a store that loses every upload must not keep
    /// it going).
    private func startOver(
        _ reason: MultipartNote.StartOver.Reason, detail: String, old: PartLogCodec.State?, discarding: [Int: String],
        stillExists: Bool, after outcome: UploadOutcome?
    ) {
        guard !startedOver || outcome == nil else {
            fail(outcome!.withoutBody, abortUpload: false)
            return
        }
        startedOver = true
        let oldPlan = old?.plan ?? plan
        let oldUpload = old ?? uploadID.map {
            PartLogCodec.State(
                size: plan.size, partSize: plan.partSize, region: signer.region, uploadID: $0, url: request.url, coding: request.compression)
        }
        let bytes = discarding.keys.filter { (1...oldPlan.partCount).contains($0) }.reduce(Int64(0)) { $0 + oldPlan.range(ofPart: $1).length }
        var owed: OwedAbort?
        if stillExists, let oldUpload {
            if let journal {
                do {
                    owed = try journal.oweAbort(oldUpload, since: clock.now())
                } catch is PartJournalRefusal {
                    abort(uploadID: oldUpload.uploadID, url: oldUpload.url)  // unrecordable: best effort
                } catch {
                    fail(.spoolFailure("cannot record the abort of the old upload in the spool's part log: \(error)"), abortUpload: false)
                    return
                }
            } else {
                abort(uploadID: oldUpload.uploadID, url: oldUpload.url)
            }
        }
        note(.startedOver(.init(
            reason: reason, detail: detail, oldUploadID: oldUpload?.uploadID ?? "", discardedParts: discarding.count, discardedBytes: bytes)))
        if let owed { note(.abortOwed(owed)) }
        journal?.discard()
        uploadID = nil
        done = [:]
        repairedCompletion = false
        create()
    }

    private func note(_ note: MultipartNote) { request.multipartNotes?(note) }

    // MARK: Requests

    /// Signs and sends one request through the transport. `then` gets 2xx answers (on `work`);
    /// an answer saying the upload or one of its parts is gone (404 `NoSuchUpload`, 400
    /// `InvalidPart`) goes to `gone` when given; any other answer, or none, to `otherwise` when
    /// given (not a cancel, nor a blob that changed); else it ends the attempt.
    private func send(
        step: Int, method: String, query: String, payload: UploadRequest.Payload, contentType: String? = nil,
        headers: [String: String], gone: (@Sendable (UploadOutcome) -> Void)? = nil,
        otherwise: (@Sendable (UploadOutcome) -> Void)? = nil, then: @escaping @Sendable (HTTPAnswer) -> Void
    ) {
        guard !finished else { return }
        // Held in flight while it waits for its token, so the attempt neither completes nor
        // forgets it meanwhile; a cancel before the token comes stops it.
        let cancellation = RequestCancellation()
        inFlight[step] = cancellation
        paced { [self] startedAt in
            guard !finished, !cancellation.isCancelled else { return }
            sendNow(
                step: step, method: method, query: query, payload: payload, contentType: contentType, headers: headers,
                cancellation: cancellation, startedAt: startedAt, gone: gone, otherwise: otherwise, then: then)
        }
    }

    /// `send`, once the request's token is taken (at `startedAt`).
    private func sendNow(
        step: Int, method: String, query: String, payload: UploadRequest.Payload, contentType: String?,
        headers: [String: String], cancellation: RequestCancellation, startedAt: Timestamp,
        gone: (@Sendable (UploadOutcome) -> Void)?, otherwise: (@Sendable (UploadOutcome) -> Void)?,
        then: @escaping @Sendable (HTTPAnswer) -> Void
    ) {
        guard let signed = S3MultipartUpload.stepRequest(
            request, method: method, query: query, payload: payload, contentType: contentType ?? request.contentType,
            headers: headers, signer: signer, clock: clock)
        else {
            if let failure = request.body.failure {
                fail(.refusal(.blobChanged, failure), abortUpload: false)
            } else {
                fail(.refusal(.urlRefused, "invalid upload URL '\(request.url)'"), abortUpload: false)
            }
            return
        }
        var stepRequest = signed
        stepRequest.cancellation = cancellation
        transport.start(stepRequest) { [self] outcome in
            work.async { [self] in
                inFlight[step] = nil
                guard !finished else { return }
                if !outcome.isCancelled, let pacer {
                    let judged = S3ErrorClassifier.judge(outcome)
                    pacer.answered(judged, startedAt: startedAt, now: clock.now(), unitRandom: clock.unitRandom())
                    if judged.class == .throttled {
                        // The store asks for less, not about this step: the same step again, at the lowered rate.
                        send(
                            step: step, method: method, query: query, payload: payload, contentType: contentType, headers: headers,
                            gone: gone, otherwise: otherwise, then: then)
                        return
                    }
                }
                switch outcome {
                case .cancelled:
                    fail(.cancelled, abortUpload: false)
                case .answered(let answer) where (200..<300).contains(answer.status):
                    then(answer)
                case .answered(let answer)
                where gone != nil && S3MultipartUpload.saysGone(status: answer.status, code: S3ErrorClassifier.errorCode(in: answer.excerpt)):
                    gone!(outcome)
                case .failed where request.body.failure != nil:
                    // The blob changed under us (a spooled blob never may): an item error, not the network's.
                    fail(.refusal(.blobChanged, request.body.failure!), abortUpload: false)
                case .answered, .failed:
                    if let otherwise { otherwise(outcome) } else { fail(outcome.withoutBody, abortUpload: false) }
                case .refused, .spoolFailure:
                    fail(outcome.withoutBody, abortUpload: false)
                }
            }
        }
    }

    /// Runs `body` (on `work`) once the daemon's rate allows a request, with the time it did.
    private func paced(_ body: @escaping @Sendable (Timestamp) -> Void) {
        guard let pacer, !firstPaid else {
            firstPaid = false
            body(clock.now())
            return
        }
        pacer.whenAllowed(on: work, clock: clock, body)
    }

    /// One step of the upload of `item`, signed: the object's URL with `query`, the body hashed
    /// (a part 1 MiB at a time). Shares the item's blob without owning it; follows no redirect;
    /// keeps `answerKeep` bytes of the answer. Nil when the URL is invalid or the blob cannot be read.
    static func stepRequest(
        _ item: UploadRequest, method: String, query: String, payload: UploadRequest.Payload, contentType: String,
        headers: [String: String], signer: SigV4Signer, clock: any Clock
    ) -> UploadRequest? {
        guard let origin = HTTPOrigin(item.url) else { return nil }
        var step = UploadRequest(
            id: item.id, attempt: item.attempt, url: query.isEmpty ? item.url : item.url + "?" + query, method: method, body: item.body,
            contentType: contentType, headers: [:])
        step.payload = payload
        step.ownsBody = false
        step.answerKeep = answerKeep
        step.followsRedirects = false
        if case .range(let offset, let length) = payload, let coding = item.compression {
            // One gzip member per part; every part but the last at least S3's smallest.
            step.compression = coding
            step.codedMinimum = offset + length < item.size ? S3PartPlan.minimumPartSize : 0
        }
        let payloadHash: String
        do {
            // A compressed part is measured by the same read: its Content-Length.
            let (measured, sha256) = try step.measured(hashing: true)
            step = measured
            payloadHash = SigV4Signer.hex(sha256 ?? [])
        } catch {
            return nil
        }
        let (path, _) = S3SigningTransport.pathAndQuery(of: item.url)
        let signed = signer.headers(
            method: method, host: S3SigningTransport.hostHeader(origin), path: path, query: query,
            payloadHash: payloadHash, date: clock.now(), own: headers)
        // A configured header of the same name must not replace a signed one.
        let names = Set(signed.keys.map { $0.lowercased() })
        for (name, value) in headers where !names.contains(name.lowercased()) { step.headers[name] = value }
        for (name, value) in signed { step.headers[name] = value }
        return step
    }

    /// Ends the attempt: cancels what is in flight; without a log (or when asked), aborts the
    /// upload, since no later attempt could resume it.
    private func fail(_ outcome: UploadOutcome, abortUpload: Bool) {
        guard !finished else { return }
        for cancellation in inFlight.values { cancellation.cancel() }
        inFlight.removeAll()
        if let uploadID, abortUpload || journal == nil, !outcome.isCancelled {
            abort(uploadID: uploadID, url: request.url)
        }
        finish(outcome)
    }

    private func finish(_ outcome: UploadOutcome) {
        guard !finished else { return }
        finished = true
        request.body.close()
        completion(S3ErrorClassifier.judge(outcome))
    }

    /// AbortMultipartUpload of an upload nothing records (no log, or one that cannot hold it),
    /// best effort: one request; a lifecycle rule cleans up what it leaves (docs/s3.md).
    private func abort(uploadID: String, url: String) {
        S3MultipartUpload.abort(
            uploadID: uploadID, url: url, id: request.id, transport: transport, signer: signer, clock: clock,
            deadlineSeconds: min(deadlineSeconds, 30)
        ) { _ in }
    }

    /// Sends AbortMultipartUpload for `uploadID` of the object at `url` (item `id`'s) through
    /// `transport`; `then` gets the answer (`AbortSchedule.judge` says what it means).
    static func abort(
        uploadID: String, url: String, id: ItemID, transport: any UploadTransport, signer: SigV4Signer, clock: any Clock,
        deadlineSeconds: Double, then: @escaping @Sendable (UploadOutcome) -> Void
    ) {
        // No blob behind it: the request sends no body.
        let item = UploadRequest(
            id: id, attempt: 0, url: url, method: "DELETE", body: BlobBody.none, contentType: "application/xml", headers: [:])
        let query = "uploadId=" + URLTemplate.encodePathSegment(uploadID)
        guard var step = stepRequest(
            item, method: "DELETE", query: query, payload: .none, contentType: item.contentType, headers: [:], signer: signer, clock: clock)
        else {
            then(.refusal(.urlRefused, "invalid upload URL '\(url)'"))
            return
        }
        step.deadlineSeconds = deadlineSeconds
        transport.start(step, completion: then)
    }

    /// The outcome of a journal write that threw after `answer`: a record too long for the log is
    /// the store's doing (its answer ruled retryable, like any answer spoold cannot use); anything
    /// else is the spool failing, which stops the daemon, never a retry that trusts a second fsync.
    static func journalFailure(_ error: any Error, what: String, answer: HTTPAnswer) -> UploadOutcome {
        if let refusal = error as? PartJournalRefusal {
            return .answered(answer.ruled(.retryable, because: "cannot record \(what): \(refusal)"))
        }
        return .spoolFailure("cannot record \(what) in the spool's part log: \(error)")
    }

    /// The store's way of saying an upload, or a part of it, is not there (any more).
    static func saysGone(status: Int, code: String?) -> Bool {
        (status == 404 && code == "NoSuchUpload") || (status == 400 && code == "InvalidPart")
    }

    /// The kept answer of a step as text (its XML).
    static func text(of answer: HTTPAnswer) -> String { String(decoding: answer.body ?? [], as: UTF8.self) }

    /// The contents of every `<Tag>…</Tag>` in an XML answer, in order.
    static func elements(_ tag: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = Substring(xml)
        while let open = rest.firstRange(of: "<\(tag)>"), let close = rest[open.upperBound...].firstRange(of: "</\(tag)>") {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

}
