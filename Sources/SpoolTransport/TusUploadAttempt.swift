import SpoolCore

/// One attempt of one item's tus upload: the driver of `TusUpload`, which decides every step.
/// It sends what the machine asks through its `TusTransport` (OPTIONS, POST, HEAD, PATCH), has
/// the daemon record the upload URL in the item's log (`PartRecorder`) and sends a byte to it
/// only once that is durable, hands a start-over to the daemon (which owes the old upload's
/// termination, says so and discards the log), notes the offsets the server acknowledges (hints
/// the daemon writes unsynced), says what it resumed (`MultipartNote`), and reports one outcome.
/// Runs on the transport's `work` queue only, so a step is never handled after the attempt has
/// reported.
///
/// A PATCH carries `Upload-Checksum` when the server offers the `checksum` extension: the bytes
/// are hashed from the blob first (read twice; memory stays flat), the server refuses them (460)
/// if what arrived differs. A failed attempt keeps the recorded upload for the next; the engine
/// removes the log once the item's success is recorded, and owes the termination when the item
/// goes to failed/.
final class TusUploadAttempt: @unchecked Sendable {
    private let request: UploadRequest
    private let owner: TusTransport
    private let recorder: (any PartRecorder)?
    private let completion: (UploadOutcome) -> Void
    private let endpoint: String

    private var machine: TusUpload
    /// The request in flight (one at a time).
    private var inFlight: RequestCancellation?
    private var finished = false
    /// The first request's token was taken by the item's claim.
    private var firstPaid = true

    init(_ request: UploadRequest, owner: TusTransport, key: Int, completion: @escaping (UploadOutcome) -> Void) {
        (self.request, self.owner, self.completion) = (request, owner, completion)
        recorder = request.partRecorder
        endpoint = request.url
        machine = TusUpload(
            TusUpload.Settings(
                endpoint: request.url, length: request.size, chunkSize: owner.settings.chunkSize, allowedHosts: owner.settings.allowedHosts),
            capabilities: nil, recorded: nil)
    }

    /// On `work`. A log of an S3 upload (`--url` switched from s3:// to tus+) is given up first,
    /// through the daemon (its abort owed durably, then the log discarded): the upload begins
    /// anew only once that is done.
    func start() {
        guard let recorder, let logged = recorder.load() else { return begin(recorded: nil) }
        guard let recorded = logged.tus else {
            return recorder.record(.startOver(StartOverRecord(otherKind: logged))) { [self] _ in
                owner.work.async { [self] in
                    guard !finished else { return }
                    begin(recorded: nil)
                }
            }
        }
        begin(recorded: recorded)
    }

    private func begin(recorded: (record: TusUploadRecord, offset: Int64)?) {
        machine = TusUpload(machine.settings, capabilities: owner.known(endpoint), recorded: recorded)
        perform(machine.start())
    }

    /// Ends the attempt with `.cancelled` (the daemon is stopping); the recorded upload is kept. On `work`.
    func cancel() { finish(.cancelled) }

    // MARK: Actions

    private func perform(_ action: TusUpload.Action) {
        guard !finished else { return }
        switch action {
        case .none:
            return
        case .options:
            paced { [self] in
                owner.probe(endpoint, for: request.id, headers: request.headers, deadlineSeconds: nil) { [self] outcome in
                    guard !finished else { return }
                    if outcome.isCancelled { return finish(.cancelled) }
                    let next = machine.answered(outcome)
                    if let learned = machine.capabilities { owner.remember(learned, for: endpoint) }
                    perform(next)
                }
            }
        case .create(let bodyLength, let checksum):
            let headers = TusRequestHeaders.create(length: request.size, fileName: request.uploadName, fileType: request.contentType)
            send("POST", endpoint, payload: bodyLength > 0 ? .range(offset: 0, length: bodyLength) : .bytes([]), headers, checksum: checksum)
        case .recordUploadURL(let record):
            recorder?.reached(TusStep.created)
            guard let recorder else { return perform(machine.recorded()) }
            recorder.record(.tusUpload(record)) { [self] recorded in
                owner.work.async { [self] in
                    guard !finished else { return }
                    if case .refused(let refusal) = recorded {
                        return finish(.refusal(.urlRefused, "cannot record the tus upload URL: \(refusal)"))
                    }
                    recorder.reached(TusStep.recorded)
                    perform(machine.recorded())
                }
            }
        case .head(let url):
            send("HEAD", url, payload: .none, TusRequestHeaders.resumable, checksum: nil)
        case .patch(let url, let offset, let length, let checksum):
            send("PATCH", url, payload: .range(offset: offset, length: length), TusRequestHeaders.patch(offset: offset), checksum: checksum)
        case .startOver(let over):
            guard let recorder else {
                note(over.note)
                return perform(machine.startedOver())
            }
            // The daemon owes the old upload's termination (one too long to record is left to the
            // server's expiry), says so and discards the log.
            recorder.record(.startOver(over.record)) { [self] _ in
                owner.work.async { [self] in
                    guard !finished else { return }
                    perform(machine.startedOver())
                }
            }
        case .done(let answer):
            finish(.answered(answer))
        case .fail(let outcome):
            finish(outcome)
        }
    }

    /// Sends one request of the protocol; its outcome goes to the machine. The request's token of
    /// the daemon's rate comes first (the first was the claim's); a throttled answer lowers the
    /// rate and the same request goes again.
    private func send(
        _ method: String, _ url: String, payload: UploadRequest.Payload, _ tus: [String: String], checksum: TusChecksum?
    ) {
        let cancellation = RequestCancellation()
        inFlight = cancellation
        paced { [self] in
            guard !finished, !cancellation.isCancelled else { return }
            var headers = TusRequestHeaders.merged(own: request.headers, tus: tus)
            if let checksum, case .range(let offset, let length) = payload {
                let part = [RequestBody.Part.blob(request.body, offset: offset, length: length)]
                do {
                    let digest = checksum == .sha256 ? try BodyDigest.sha256(of: part) : try BodyDigest.sha1(of: part)
                    headers.merge(TusRequestHeaders.checksum(checksum, digest: digest)) { $1 }
                } catch {
                    if let failure = request.body.failure { return finish(.refusal(.blobChanged, failure)) }
                    return finish(.failed(.bodyUnhashable("compute the Upload-Checksum", "\(error)")))
                }
            }
            let startedAt = owner.clock.now()
            let before = machine.knownOffset
            owner.step(
                id: request.id, attempt: request.attempt, method: method, url: url, body: request.body, payload: payload,
                headers: headers, deadlineSeconds: nil, cancellation: cancellation
            ) { [self] outcome in
                if inFlight === cancellation { inFlight = nil }
                guard !finished else { return }
                if outcome.isCancelled { return finish(.cancelled) }
                if let pacer = owner.pacer {
                    pacer.answered(outcome, startedAt: startedAt, now: owner.clock.now(), unitRandom: owner.clock.unitRandom())
                    if outcome.class == .throttled {
                        // The server asks for less, not about this request: the same again, at the lowered rate.
                        send(method, url, payload: payload, tus, checksum: checksum)
                        return
                    }
                }
                if case .failed = outcome, let failure = request.body.failure {
                    // The blob changed under us (a spooled blob never may): the item's fault, not the network's.
                    return finish(.refusal(.blobChanged, failure))
                }
                let wasResumed = machine.resumedAt != nil
                let next = machine.answered(outcome)
                if method == "PATCH", machine.knownOffset > before {
                    // A hint the daemon writes with others (its crash point is where it is written).
                    recorder?.noteOffset(machine.knownOffset)
                }
                if !wasResumed, let offset = machine.resumedAt {
                    note(.tusResumed(.init(uploadURL: url, length: request.size, offset: offset)))
                }
                perform(next)
            }
        }
    }

    /// Runs `body` (on `work`) once the daemon's rate allows a request.
    private func paced(_ body: @escaping @Sendable () -> Void) {
        guard let pacer = owner.pacer, !firstPaid else {
            firstPaid = false
            body()
            return
        }
        pacer.whenAllowed(on: owner.work, clock: owner.clock) { _ in body() }
    }

    private func note(_ note: MultipartNote) { request.multipartNotes?(note) }

    /// Ends the attempt once: cancels what is in flight, lets go of the blob, keeps or forgets what
    /// the endpoint offers (a failure forgets it: the next attempt asks again), and reports.
    private func finish(_ outcome: UploadOutcome) {
        guard !finished else { return }
        finished = true
        inFlight?.cancel()
        inFlight = nil
        request.release()
        if outcome.class == .success, let learned = machine.capabilities {
            owner.remember(learned, for: endpoint)
        } else if !outcome.isCancelled {
            owner.forget(endpoint)
        }
        completion(outcome)
    }
}
