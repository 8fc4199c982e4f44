import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTransport

extension Engine {
    /// Chooses due items up to the concurrency limit and adds their claims (pending .aN →
    /// inflight .a(N+1)) to the round; `commitRound` counts the attempts on disk before any
    /// request is sent, then starts the uploads.
    func collectClaims(now: Timestamp, into round: inout Round) throws {
        // Memory first holds what comes first in line, whatever waits beyond it.
        try feedMemory(now: now, keep: recording.union(round.finishedIDs))
        // Outside the upload windows nothing is claimed, not even a probe (`Engine+Timetables`).
        guard !uploadsHeld else { return }
        var slots = configuration.concurrency - uploads.count
        guard slots > 0 else { return }
        var probe = false
        if endpoint.outage != nil {
            // Taken only once a slot is free, and given back below if nothing was due: a probe
            // marked out with none sent would stop probing for good.
            guard endpoint.startProbe(now: now) else { return }
            slots = 1
            probe = true
        }

        var claimed = 0
        // Items finished in this round are not on disk where they are going until the round is
        // committed: they wait for the next round.
        var deferred: [DueQueue.Entry] = []
        defer { for entry in deferred { due.push(entry) } }
        while claimed < slots, let next = due.first, next.notBefore <= now {
            // Nothing waiting beyond memory may come before it (`Backlog`).
            if let lifecycle = items[next.id], lifecycle.state == .pending, lifecycle.notBefore == next.notBefore,
               !backlog.mayClaim(backlogEntry(next.id, lifecycle)) {
                break
            }
            _ = due.popFirst()
            if round.finishedIDs.contains(next.id) {
                deferred.append(next)
                continue
            }
            guard var lifecycle = items[next.id], lifecycle.state == .pending, lifecycle.notBefore == next.notBefore
            else { continue }  // a stale heap entry
            // While the endpoint throttles, a request starts only when the rate allows (a probe
            // is paced by the outage); the step that gets the next token claims the item.
            guard probe || pacer.take(now: now) else {
                deferred.append(next)
                break
            }
            let from = lifecycle.location
            let metadata: ItemMetadata
            do {
                metadata = try spool.readMetadata(next.id, at: from)
                try checkBlob(next.id, at: from, expectedSize: metadata.size)
                if let own = metadata.url, let refusal = configuration.allowedURLs.refusal(for: own) {
                    throw EngineItemError(.urlRefused, refusal)
                }
            } catch {
                if !probe { pacer.giveBack(now: now) }
                try quarantine(next.id, lifecycle, reason: (error as? EngineItemError)?.reason ?? FailureReason(.metadata, "\(error)"))
                continue
            }
            let pending = lifecycle
            let claim = lifecycle.claim()
            if case .fail(_, _, let reason) = claim {
                if !probe { pacer.giveBack(now: now) }
                try quarantine(next.id, pending, reason: reason)
                continue
            }
            items[next.id] = lifecycle
            round.claims.append(Round.Claim(transition: SpoolTransition(claim.record(for: next.id)), metadata: metadata, isProbe: probe))
            claimed += 1
        }
        if claimed == 0, probe { endpoint.probeNotSent() }
    }

    /// Hands a durable claim to the transport.
    func start(_ claim: Round.Claim, now: Timestamp) {
        let id = claim.transition.record.id
        let metadata = claim.metadata
        let location = claim.transition.record.to!
        uploads[id] = Upload(metadata: metadata, startedAt: now, isProbe: claim.isProbe)
        let body: BlobBody
        do {
            body = try openBody(id, at: location, expectedSize: metadata.size)
        } catch {
            // The blob is not what the json says: the attempt fails without a request (a blob is
            // never changed once spooled).
            let reason = (error as? EngineItemError)?.reason ?? FailureReason(.blobChanged, "\(error)")
            events.post(id, .refusal(reason.code, reason.text))
            return
        }
        send(id, attempt: location.attempt, metadata: metadata, body: body)
    }

    /// Builds the request of one attempt and starts it; its outcome comes back as an event.
    func send(_ id: ItemID, attempt: Int, metadata: ItemMetadata, body: BlobBody) {
        // Checked at intake (the sidecar) and again here, where they are used: a json edited by
        // hand or written by `enqueue` went through no sidecar check.
        if let refusal = itemHeaderRefusal(metadata.headers) {
            body.close()
            events.post(id, .refusal(.headerRefused, "not sent: \(refusal)"))
            return
        }
        let headers = HeaderFields.request(
            operator: configuration.headers, item: metadata.headers, secrets: configuration.credentialHeaders)
        var request = UploadRequest(
            id: id, attempt: attempt,
            url: metadata.url ?? configuration.url.url(
                id: id, originalNameBytes: metadata.originalNameBytesOrUTF8, createdAt: metadata.creationTime),
            method: configuration.method, body: body, contentType: metadata.contentType, headers: headers)
        request.contentDigest = configuration.contentDigest
        if let coding = configuration.compression, !configuration.tusUploads,
           CompressionRule.skipReason(
               name: metadata.originalName, contentType: metadata.contentType, size: metadata.size, headers: headers) == nil
        {
            // The item's request carries the header (an S3 object keeps it as its metadata; the
            // parts of a multipart upload send none).
            request.compression = coding
            HeaderFields.set("Content-Encoding", coding.rawValue, in: &request.headers)
        }
        request.uploadName = metadata.originalNameBytesOrUTF8
        if configuration.tusUploads || configuration.multipartThreshold.map({ metadata.size > $0 }) == true {
            // Progress that outlives the attempt: an S3 multipart upload's parts, a tus upload's URL.
            let direct = items[id]?.take == .direct
            let recorder = UploadRecorder(log: spool.partLogs.log(for: id, syncDeferred: direct), events: events)
            request.partRecorder = recorder
            let events = self.events
            request.multipartNotes = { note in events.report(.multipart(id, note)) }
            if direct, let startedAt = uploads[id]?.startedAt {
                uploads[id]?.progress = .deferredPartLog(recorder, durableBy: startedAt.adding(seconds: configuration.directDurableSeconds))
            } else {
                uploads[id]?.progress = .partLog(recorder)
            }
        }
        if let field = configuration.formField {
            request.form = MultipartForm(
                fileField: field, fileName: metadata.originalName, contentType: metadata.contentType,
                fields: metadata.fields, randomBits: (UInt64.random(in: 0...UInt64.max), UInt64.random(in: 0...UInt64.max)))
        }
        uploads[id]?.path = URLPathText.display(request.url)
        let coded = request.compression.map { ", sent \($0.rawValue)" } ?? ""
        log.debug("uploading \(id) (attempt \(attempt), \(metadata.size) B\(coded)) to \(request.url)")  // redacted by EventLog
        let events = self.events
        requestsStarted += 1
        transport.start(request) { outcome in events.post(id, outcome) }
    }

    /// Adds every finished upload to the round: removed (or done/), back to pending with its
    /// next-attempt time, or parked in failed/ with the attempt history.
    func collectFinished(_ finished: [CompletionInbox.Completion], now: Timestamp, into round: inout Round) {
        for completion in finished {
            guard let upload = uploads.removeValue(forKey: completion.id), var lifecycle = items[completion.id] else {
                continue
            }
            // A tus upload's last offsets go to its log before the log is kept or removed.
            upload.progress.recorder?.writeNotedOffsets()
            if round.recordFailure?.id == completion.id {
                // Its progress could not be recorded: not acknowledged, the item stays in
                // inflight/ for start-up recovery.
                continue
            }
            // What the history, the log and the hooks get holds no configured secret, even when
            // the answer echoed the request.
            let outcome = configuration.secrets.adding(SecretRedaction.values(of: upload.metadata.headers))
                .redact(configuration.outcomeRules.judge(completion.outcome))
            let attempt = lifecycle.attemptsMade
            trackOutage(outcome, isProbe: upload.isProbe, now: now)
            // A multipart upload told the rate each of its steps' answers itself (and retried the
            // throttled ones: a pass ends throttled only through a transport without the rate).
            if !outcome.isCancelled && (!upload.progress.keepsPartLog || outcome.class == .throttled) {
                let change = pacer.answered(outcome, startedAt: upload.startedAt, now: now, unitRandom: clock.unitRandom())
                if case .cut(let rate) = change { log.debug("throttled again: requests limited to \(Engine.perSecond(rate)) a second") }
            }
            // Nothing of a direct take is recorded: the move that ends its attempt writes its first json.
            let direct = lifecycle.take == .direct
            let action: ItemLifecycle.Action
            let cutByWindow = windowCut.remove(completion.id) != nil
            if (cancelling || cutByWindow) && outcome.isCancelled {
                if cutByWindow { log.debug("attempt \(attempt) of \(completion.id) cut as the upload window closed; handed back uncounted") }
                action = lifecycle.handBack(now: now)
            } else {
                // The json read at the claim holds the history of the attempts before this one.
                action = lifecycle.finish(
                    outcome, policy: configuration.policy, earlier: AttemptTally(ended: attempt - 1, history: upload.metadata.attempts),
                    now: now, unitRandom: clock.unitRandom(), keepDone: configuration.keepDone)
            }
            var metadata = upload.metadata
            // The json is readable by other users: a redirect's or a refused URL's secrets stay out.
            let record = AttemptRecord(
                number: attempt, startedAt: upload.startedAt, finishedAt: now, outcome: outcome.class.rawValue,
                httpStatus: outcome.httpStatus, error: outcome.errorText.map(LogRedaction.urls(in:)),
                responseExcerpt: outcome.responseExcerpt, code: outcome.code)
            let id = completion.id
            switch action {
            case .complete, .discardDirect:
                metadata.attempts.append(record)
                if case .complete(_, let to) = action {
                    round.finish(SpoolTransition(action.record(for: id), metadata: to == nil ? nil : metadata))
                } else {
                    // Nothing of it was recorded: its blob goes, and that is all.
                    round.directSuccesses.append(id)
                }
                items[id] = nil
                if upload.progress.keepsPartLog { round.finishedMultipart.append((id, false)) }
                summary.uploaded += 1
                round.messages.append((.info, "uploaded \(id)\(upload.path.map { " to \($0)" } ?? "") (\(metadata.size) B, attempt \(attempt), \(outcome.summary))"))
                round.outcomes.append(ItemOutcomeEvent(
                    kind: .uploaded, id: id, originalName: metadata.originalName, httpStatus: outcome.httpStatus,
                    size: metadata.size))
            case .handBack(_, let to, let notBefore):
                if outcome.class == .throttled {
                    log.debug("attempt \(attempt) of \(completion.id) throttled (\(outcome.summary)); handed back uncounted")
                }
                // The attempt did not count, so the history is left as it was. An item handed
                // back untried keeps its place in line: the time in its id, as a pass reads it.
                round.finish(SpoolTransition(
                    action.record(for: id), metadata: direct ? metadata : nil, notBefore: notBefore, fromDirectUpload: direct))
                if to.attempt == 0 { lifecycle = ItemLifecycle(location: to, notBefore: BacklogEntry.untried(id).notBefore) }
                items[id] = lifecycle
                round.requeued.append(.init(notBefore: lifecycle.notBefore, id: id))
            case .requeue(_, _, let notBefore):
                metadata.attempts.append(record)
                round.finish(SpoolTransition(
                    action.record(for: id), metadata: metadata, notBefore: notBefore, fromDirectUpload: direct))
                items[id] = lifecycle
                round.requeued.append(.init(notBefore: notBefore, id: id))
                summary.retried += 1
                let wait = now.seconds(until: notBefore)
                round.messages.append((.info, "attempt \(attempt) of \(id) failed (\(outcome.summary)); next try in \(formatSeconds(wait))"))
            case .fail(_, _, let reason):
                metadata.attempts.append(record)
                metadata.setFailure(FailureReason(reason.code, LogRedaction.urls(in: reason.text)))
                round.finish(SpoolTransition(action.record(for: id), metadata: metadata, fromDirectUpload: direct))
                items[id] = nil
                if upload.progress.keepsPartLog { round.finishedMultipart.append((id, true)) }
                summary.failed += 1
                round.messages.append((.warning, "gave up on \(id)\(upload.path.map { " (\($0))" } ?? ""): \(reason); parked in failed/"))
                round.outcomes.append(ItemOutcomeEvent(
                    kind: .failed, id: id, originalName: metadata.originalName, httpStatus: outcome.httpStatus,
                    size: metadata.size, reason: reason.text))
            case .claimAndUpload, .uploadDirect, .retry, .purge:
                preconditionFailure("finish neither claims, takes, retries nor purges")
            }
            observers.uploadFinished(
                id, outcome: outcome, size: metadata.size, seconds: upload.startedAt.seconds(until: now), stillQueued: items[id] != nil)
        }
    }

    /// Pauses the queue while the endpoint is unreachable and resumes it on the first answer;
    /// logs once when it goes down and once when it comes back.
    func trackOutage(_ outcome: UploadOutcome, isProbe: Bool, now: Timestamp) {
        let change = endpoint.attemptEnded(
            outcome.class, isProbe: isProbe, reason: outcome.summary, now: now, maximumProbeSeconds: configuration.maximumProbeSeconds)
        switch change {
        case .none:
            break
        case .wentDown:
            // An answer that pauses uploads (an S3 configuration problem) is not "unreachable".
            let what = outcome.class == .configuration ? "endpoint refuses every upload" : "endpoint unreachable"
            let reason = "\(what) (\(outcome.summary))"
            log.warning("\(reason); pausing uploads and probing, attempts are not counted")
            do {
                // Shown by 'spoold status'; the marker is readable by others, like the log.
                try OutageMarker.write(.init(since: now, reason: LogRedaction.urls(in: reason)), in: spool)
            } catch {
                log.warning("cannot write \(spool.path)/\(OutageMarker.fileName) for 'spoold status': \(error)")
            }
        case .cameBack(let since):
            OutageMarker.remove(in: spool)
            log.info("endpoint reachable again after \(formatSeconds(since.seconds(until: now))); resuming uploads")
        }
    }

    /// The blob must still be the file that was spooled: blobs never change once spooled.
    func checkBlob(_ id: ItemID, at location: ItemLocation, expectedSize: Int64) throws {
        let name = ItemFileName(id: id, attempt: location.attempt, kind: .blob)
        let status: FileStatus
        do {
            status = try spool.status(of: name, at: location)
        } catch {
            throw EngineItemError(.blobMissing, "its payload \(SpoolFolder(location.state).rawValue)/\(name) is missing")
        }
        guard status.type == .regular else { throw EngineItemError(.blobChanged, "its payload \(name) is not a regular file") }
        guard status.size == expectedSize else {
            throw EngineItemError(.blobChanged, "its payload changed size (\(status.size) B, spooled as \(expectedSize) B)")
        }
    }

    /// Opens a claimed blob for its upload, the only way a body is read: never through a
    /// symlink, a regular file of exactly the size its json records (nothing in the spool can make spoold read elsewhere). Whatever
    /// is swapped in after this check, the upload reads the file checked here.
    func openBody(_ id: ItemID, at location: ItemLocation, expectedSize: Int64) throws -> BlobBody {
        let name = "\(SpoolFolder(location.state).rawValue)/\(ItemFileName(id: id, attempt: location.attempt, kind: .blob))"
        let fd: FileDescriptor
        let status: FileStatus
        do {
            (fd, status) = try spool.openBlob(id, at: location)
        } catch let error as SystemError where error.errno == .tooManySymbolicLinkLevels {
            throw EngineItemError(.blobChanged, "its payload \(name) is a symbolic link; nothing was sent")
        } catch let error as SystemError where error.isNotFound {
            throw EngineItemError(.blobMissing, "its payload \(name) is missing")
        }
        guard status.type == .regular, status.size == expectedSize else {
            spool.closeBlob(fd)
            if status.type != .regular { throw EngineItemError(.blobChanged, "its payload \(name) is not a regular file; nothing was sent") }
            throw EngineItemError(.blobChanged, "its payload changed size (\(status.size) B, spooled as \(expectedSize) B); nothing was sent")
        }
        return BlobBody(descriptor: fd, size: expectedSize)
    }

    /// Parks an item that cannot be uploaded (unreadable metadata, missing or changed blob) in
    /// failed/, keeping whatever files it has, and carries on.
    func quarantine(_ id: ItemID, _ lifecycle: ItemLifecycle, reason: FailureReason) throws {
        items[id] = nil
        observers.itemLeftQueue(id)
        var lifecycle = lifecycle
        let location = lifecycle.location
        let action = lifecycle.quarantine(reason: reason)
        let to = lifecycle.location
        var metadata = try? spool.readMetadata(id, at: location)
        metadata?.setFailure(FailureReason(reason.code, LogRedaction.urls(in: reason.text)))
        let blob = ItemFileName(id: id, attempt: location.attempt, kind: .blob)
        if (try? spool.status(of: blob, at: location)) != nil {
            if let metadata {
                _ = try spool.commit([SpoolTransition(action.record(for: id), metadata: metadata)])
            } else {
                _ = try spool.commit([SpoolTransition(action.record(for: id))])
            }
        } else {
            try spool.quarantine(id, from: location, to: to, metadata: metadata)
        }
        summary.failed += 1
        log.warning("\(id) cannot be uploaded: \(reason); parked in failed/")
        observers.itemFinished(ItemOutcomeEvent(
            kind: .failed, id: id, originalName: metadata?.originalName ?? "", httpStatus: metadata?.attempts.last?.httpStatus,
            size: metadata?.size ?? 0, reason: reason.text))
    }
}
