import Dispatch
import SpoolCore

/// One attempt of an S3 multipart upload: the driver of `S3MultipartUpload` (SpoolCore), which
/// decides every step, resumed from the item's part log when it has one. It signs and sends what
/// the machine asks through the HTTP transport the daemon chose (`URLSessionTransport` or
/// `CurlTransport`), has the daemon record the upload id and each part's ETag in the item's log
/// (`PartRecorder`) and tells the machine once each is durable, hands a start-over to the daemon
/// (which owes the old upload's abort, says so and discards the log), says what it resumed or
/// checked (`MultipartNote`), and reports one outcome.
///
/// A part is a byte range of the attempt's blob, hashed (its SigV4 payload hash, read 1 MiB at a
/// time) and then streamed from the blob's descriptor: memory stays flat whatever the part size.
/// With `--compress` (`request.compression`) a part is one gzip member of its range, every part
/// but the last padded to S3's smallest part, measured by the same read as its hash (its
/// `Content-Length`); only CreateMultipartUpload carries the item's `Content-Encoding`. The I/O
/// the machine asks for besides requests is done here too: sampling how the blob compresses
/// (`planUpload`) and hashing the blob or its compressed parts (`hashContent`).
/// The XML steps send a few bytes of their own; no redirect is followed, the answer is kept up to
/// `answerKeep` bytes (cut at 1 MiB), and each request has the transport's deadline.
///
/// A step the store throttles (`SlowDown`, 429...) is sent again within the attempt, not failed:
/// every step takes a token of the daemon's request rate (`RequestPacer`; the first was taken by
/// the item's claim) and tells it each answer, so a throttled part waits for the lowered rate.
///
/// Everything here runs on `work`, one serial queue, so a part never counts after the attempt
/// has reported. The part log is read here once, as the attempt begins (`PartRecorder.load`);
/// every record is written by the engine, in its loop, and its answer comes back on `work`.
final class S3MultipartAttempt: @unchecked Sendable {
    /// Bytes of an answer kept for its XML: a ListParts page of `S3MultipartUpload.listPage` parts.
    static let answerKeep = 256 * 1024

    private let request: UploadRequest
    private let transport: any UploadTransport
    private let signer: SigV4Signer
    private let clock: any Clock
    private let deadlineSeconds: Double
    private let work: DispatchQueue
    private let recorder: (any PartRecorder)?
    private let completion: @Sendable (UploadOutcome) -> Void
    /// The daemon's request rate; nil paces nothing.
    private let pacer: RequestPacer?

    // Only touched on `work`.
    private var machine: S3MultipartUpload
    /// Requests in flight: part number (0 for the other steps) → how to cancel it.
    private var inFlight: [Int: RequestCancellation] = [:]
    private var finished = false
    /// The first request's token was taken by the item's claim.
    private var firstPaid = true

    init(
        _ request: UploadRequest, preferredPartSize: Int64, concurrency: Int, transport: any UploadTransport, signer: SigV4Signer,
        clock: any Clock, deadlineSeconds: Double, work: DispatchQueue, pacer: RequestPacer? = nil,
        completion: @escaping @Sendable (UploadOutcome) -> Void
    ) {
        (self.request, self.transport) = (request, transport)
        self.pacer = pacer
        (self.signer, self.clock, self.deadlineSeconds, self.work) = (signer, clock, deadlineSeconds, work)
        self.recorder = request.partRecorder
        self.completion = completion
        machine = S3MultipartUpload(.init(
            url: request.url, region: signer.region, size: request.size, preferredPartSize: preferredPartSize,
            concurrency: concurrency, journaled: request.partRecorder != nil, coding: request.compression))
    }

    /// On `work`. A log of a tus upload (`--url` switched from tus+ to s3://) is given up first,
    /// through the daemon (its termination owed durably, then the log discarded): the upload
    /// begins anew only once that is done.
    func start() {
        guard let recorder, let logged = recorder.load() else { return perform(machine.start(recorded: nil)) }
        guard let recorded = logged.s3 else {
            return recorder.record(.startOver(StartOverRecord(otherKind: logged))) { [self] _ in
                work.async { [self] in
                    guard !finished else { return }
                    perform(machine.start(recorded: nil))
                }
            }
        }
        perform(machine.start(recorded: recorded))
    }

    /// Ends the attempt with `.cancelled` (the daemon is stopping); the upload is kept.
    func cancel() {
        work.async { self.perform(self.machine.cancel()) }
    }

    private var uploadIDQuery: String { "uploadId=" + URLTemplate.encodePathSegment(machine.uploadID ?? "") }

    /// SSE-C (`x-amz-server-side-encryption-customer-*`): S3 wants the customer's key with every
    /// part and the completion, not only with CreateMultipartUpload, which gets all the item's headers.
    private var customerKeyHeaders: [String: String] {
        request.headers.filter { $0.key.lowercased().hasPrefix("x-amz-server-side-encryption-customer-") }
    }

    // MARK: Actions

    private func perform(_ actions: [S3MultipartUpload.Action]) {
        for action in actions {
            switch action {
            case .abort: break  // sent even once the attempt has ended: ending asked for it
            default: if finished { return }
            }
            perform(action)
        }
    }

    private func perform(_ action: S3MultipartUpload.Action) {
        switch action {
        case .planUpload(let coding):
            // Up to 4 MiB compressed on `work`, as before the first request.
            perform(machine.planned(compressedRatio: S3MultipartAttempt.compressedRatio(of: request.body, coding: coding)))
        case .createUpload:
            send(.create, method: "POST", query: "uploads=", payload: .bytes([]), contentType: request.contentType, headers: request.headers)
        case .listParts(let marker):
            let query = "max-parts=\(S3MultipartUpload.listPage)&part-number-marker=\(marker)&" + uploadIDQuery
            send(.listParts(marker: marker), method: "GET", query: query, payload: .none, headers: [:])
        case .sendPart(let number, let offset, let length):
            let query = "partNumber=\(number)&" + uploadIDQuery
            send(.part(number), method: "PUT", query: query, payload: .range(offset: offset, length: length), headers: customerKeyHeaders)
        case .recordUploadID(let state):
            recorder?.reached(MultipartStep.created)
            record(.s3Upload(state), as: .uploadID)
        case .recordPart(let number, let etag):
            record(.part(number, etag: etag), as: .part(number))
        case .complete(let etags):
            recorder?.reached(.completing)
            let body = Array(S3PartPlan.completionBody(etags: etags).utf8)
            send(.complete, method: "POST", query: uploadIDQuery, payload: .bytes(body), contentType: "application/xml", headers: customerKeyHeaders)
        case .headObject:
            send(.headObject, method: "HEAD", query: "", payload: .none, headers: customerKeyHeaders)
        case .hashContent(let content):
            hashContent(content)
        case .say(let note):
            self.note(note)
        case .startOver(let over):
            guard let recorder else {
                note(over.note)
                return perform(machine.startedOver())
            }
            // The daemon owes the old upload's abort, says so and discards the log.
            recorder.record(.startOver(over.record)) { [self] recorded in
                work.async { [self] in
                    guard !finished else { return }
                    if case .refused = recorded, over.owesAbort, let old = over.old {
                        abort(uploadID: old.uploadID, url: old.url)  // unrecordable: best effort
                    }
                    perform(machine.startedOver())
                }
            }
        case .abort(let uploadID, let url):
            abort(uploadID: uploadID, url: url)
        case .finish(let outcome):
            recorder?.reached(.completed)
            finish(outcome)
        case .fail(let outcome):
            finish(outcome)
        }
    }

    /// Has the daemon make `entry` durable; the machine hears of it (`recorded`, or
    /// `recordRefused`) on `work`, unless the attempt ended meanwhile.
    private func record(_ entry: PartRecord, as record: S3MultipartUpload.Record) {
        guard let recorder else { return perform(machine.recorded(record)) }
        recorder.record(entry) { [self] recorded in
            work.async { [self] in
                guard !finished else { return }
                switch recorded {
                case .recorded: perform(machine.recorded(record))
                case .refused(let refusal): perform(machine.recordRefused(record, refusal))
                }
            }
        }
    }

    /// The size and MD5 of the object the upload makes, read once, off the attempts' queue (a
    /// completion in doubt, checked against the object at the key): the blob's bytes, or its
    /// parts compressed again (deterministic, `GzipStream`).
    private func hashContent(_ content: S3MultipartUpload.Content) {
        let body = request.body
        inFlight[0] = RequestCancellation()
        DispatchQueue.global().async { [self] in
            let hashed: (size: Int64, md5: [UInt8])? = switch content {
            case .blob: (try? BodyDigest.md5(of: [.blob(body, offset: 0, length: body.size)])).map { (body.size, $0) }
            case .codedParts(let plan, let coding): try? S3MultipartAttempt.codedObject(of: body, plan: plan, coding: coding)
            }
            work.async { [self] in
                inFlight[0] = nil
                guard !finished else { return }
                guard let hashed else {
                    return perform(machine.contentUnreadable(
                        request.body.failure ?? "cannot read the blob to compare it with the object at the key"))
                }
                perform(machine.contentHashed(md5: hashed.md5, size: hashed.size))
            }
        }
    }

    private func note(_ note: MultipartNote) { request.multipartNotes?(note) }

    // MARK: Requests

    /// Signs and sends one request through the transport; its outcome goes to the machine (on
    /// `work`), a blob that changed under it as the item's refusal.
    private func send(
        _ step: S3MultipartUpload.Request, method: String, query: String, payload: UploadRequest.Payload, contentType: String? = nil,
        headers: [String: String]
    ) {
        guard !finished else { return }
        let key = if case .part(let number) = step { number } else { 0 }
        // Held in flight while it waits for its token, so the attempt neither completes nor
        // forgets it meanwhile; a cancel before the token comes stops it.
        let cancellation = RequestCancellation()
        inFlight[key] = cancellation
        paced { [self] startedAt in
            guard !finished, !cancellation.isCancelled else { return }
            sendNow(
                step, key: key, method: method, query: query, payload: payload, contentType: contentType, headers: headers,
                cancellation: cancellation, startedAt: startedAt)
        }
    }

    /// `send`, once the request's token is taken (at `startedAt`).
    private func sendNow(
        _ step: S3MultipartUpload.Request, key: Int, method: String, query: String, payload: UploadRequest.Payload,
        contentType: String?, headers: [String: String], cancellation: RequestCancellation, startedAt: Timestamp
    ) {
        guard let signed = S3MultipartAttempt.stepRequest(
            request, method: method, query: query, payload: payload, contentType: contentType ?? request.contentType,
            headers: headers, signer: signer, clock: clock)
        else {
            inFlight[key] = nil
            if let failure = request.body.failure {
                perform(machine.answered(step, .refusal(.blobChanged, failure)))
            } else {
                perform(machine.answered(step, .refusal(.urlRefused, "invalid upload URL '\(request.url)'")))
            }
            return
        }
        var stepRequest = signed
        stepRequest.cancellation = cancellation
        transport.start(stepRequest) { [self] outcome in
            work.async { [self] in
                inFlight[key] = nil
                guard !finished else { return }
                if !outcome.isCancelled, let pacer {
                    let judged = S3ErrorClassifier.judge(outcome)
                    pacer.answered(judged, startedAt: startedAt, now: clock.now(), unitRandom: clock.unitRandom())
                    if judged.class == .throttled {
                        // The store asks for less, not about this step: the same step again, at the lowered rate.
                        send(step, method: method, query: query, payload: payload, contentType: contentType, headers: headers)
                        return
                    }
                }
                if case .failed = outcome, let failure = request.body.failure {
                    // The blob changed under us (a spooled blob never may): an item error, not the network's.
                    return perform(machine.answered(step, .refusal(.blobChanged, failure)))
                }
                perform(machine.answered(step, outcome))
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

    /// Ends the attempt once: cancels what is in flight, lets go of the blob, and reports.
    private func finish(_ outcome: UploadOutcome) {
        guard !finished else { return }
        finished = true
        for cancellation in inFlight.values { cancellation.cancel() }
        inFlight.removeAll()
        request.body.close()
        completion(S3ErrorClassifier.judge(outcome))
    }

    /// AbortMultipartUpload of an upload nothing records (no log, or one that cannot hold it),
    /// best effort: one request; a lifecycle rule cleans up what it leaves (docs/s3.md).
    private func abort(uploadID: String, url: String) {
        S3MultipartAttempt.abort(
            uploadID: uploadID, url: url, id: request.id, transport: transport, signer: signer, clock: clock,
            deadlineSeconds: min(deadlineSeconds, 30)
        ) { _ in }
    }
}
