import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTransport

/// Direct uploads (`Spool.takeForDirectUpload`): while the endpoint answers and no queued item is
/// due, a file announced in incoming/ goes to the endpoint at once, with no json, index record
/// or sync, one per free upload slot; the rest wait announced in incoming/ for the next free
/// slot. A file ends up a durable item only if its attempt does not succeed. Measured on the
/// path users take (files dropped into incoming/ of a running daemon, `scripts/bench`): the two
/// `syncfs` of a durable intake wrote every small file to the disk only to delete it
/// milliseconds later.
extension Engine {
    /// Whether announced files go straight to the endpoint now: it answers (no outage, no
    /// probe) and does not throttle, uploads are not held outside the upload windows, intake is
    /// not paused, and no queued item is due (those go first, in order).
    func directUploadsMayRun(now: Timestamp) -> Bool {
        configuration.directUploads && !configuration.keepDone && !directUnsupported && endpoint.outage == nil && !uploadsHeld
            && !pacer.isLimited && intake.pausedSince == nil && due.countDue(at: now, upTo: 1) == 0 && backlog.isEmpty
    }

    /// Starts a direct upload of the next announced files, one per free slot, and returns those
    /// that must be taken in as items instead: with a sidecar, with more than one link, on
    /// another file system, or refusing the name attribute. With `--max-spool-size`, every name
    /// returned was admitted by the gate already.
    func startDirectUploads(now: Timestamp) throws -> [String] {
        let slots = configuration.concurrency - uploads.count
        guard slots > 0 else { return [] }
        var intake: [String] = []
        let names = takeAnnounced(slots)
        for (n, name) in names.enumerated() {
            // Full (--max-spool-size): a file sent directly is queued bytes like an item.
            if let sizeGate, try !sizeGate.admits(name, engine: self, now: now) {
                putBackAnnounced(names[n...])
                break
            }
            incomingSettling[name] = nil
            if reportedNames.contains(name) { continue }
            // Each request counts toward the rate the daemon sends (a limit starts from it).
            guard pacer.take(now: now) else {
                putBackAnnounced(names[n...])
                break
            }
            if (try? spool.incomingStatus(name + SpoolFolder.sidecarSuffix)) != nil {
                pacer.giveBack(now: now)
                intake.append(name)
                continue
            }
            let leaf = FileName.display(IncomingFile(path: name).name)
            let id = idGenerator.next(at: now, originalName: leaf)
            switch spool.takeForDirectUpload(name, as: id) {
            case .taken(let fd, let size):
                var metadata = ItemMetadata(
                    id: id, originalName: name, size: size, contentType: ContentType.guess(forFileName: leaf), createdAt: now)
                metadata.setOriginalName(name)
                let (lifecycle, take) = ItemLifecycle.takeDirect(now: now)
                guard case .uploadDirect(let location) = take else { preconditionFailure("a direct take uploads: \(take)") }
                items[id] = lifecycle
                observers.itemQueued(id, at: location)
                sizeGate?.joinedQueue(name)
                uploads[id] = Upload(metadata: metadata, startedAt: now, isProbe: false)
                summary.ingested += 1
                log.debug("sending incoming/\(name) directly as \(id)")
                send(id, attempt: location.attempt, metadata: metadata, body: BlobBody(descriptor: fd, size: size))
            case .declined(let why):
                pacer.giveBack(now: now)
                log.debug("incoming/\(name) is taken in as an item, not sent directly: \(why)")
                intake.append(name)
            case .unsupported(let why):
                pacer.giveBack(now: now)
                directUnsupported = true
                log.info("files are not sent straight from incoming/: the spool's file system keeps no extended attributes (\(why)); each is made a durable item first")
                intake.append(name)
            }
        }
        return intake
    }

    /// Direct multipart uploads under way for `directDurableSeconds`: their blobs are synced on
    /// the spool's background thread, then their part logs, which sync every record after that.
    func makeLongDirectUploadsDurable(now: Timestamp) {
        for (id, upload) in uploads {
            guard case .deferredPartLog(let recorder, let by) = upload.progress, by <= now else { continue }
            uploads[id]?.progress = .partLog(recorder)
            log.debug("making the direct upload of \(id) durable: under way for \(formatSeconds(configuration.directDurableSeconds))")
            spool.makeDirectUploadDurable(id, partLog: recorder.log)
        }
    }

    /// When the next direct multipart upload is to be made durable.
    var nextDirectDurable: Timestamp? { uploads.values.compactMap(\.progress.durableBy).min() }
}
