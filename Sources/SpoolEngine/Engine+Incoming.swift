import SpoolCore
import SpoolStore
import SpoolSystem

extension Engine {
    /// Most files taken in one round, so uploads keep flowing while a big drop is ingested.
    static let ingestBatchLimit = 1024

    /// Reads inotify: arrivals in incoming/ are taken at once; a json moved into pending/ by an
    /// operator (`mv failed/* pending/`, `spoold retry`) is adopted.
    func takeWatcherEvents(now: Timestamp) throws {
        var rescan = false
        for event in watcher.readEvents() {
            if event.overflowed { rescan = true; continue }
            if event.watch == incomingWatch {
                guard isCandidate(event.name) else { continue }
                if event.mask & InotifyWatcher.closeWrite != 0 {
                    // Each close of a writer is a complete file.
                    incomingAnnounced.insert(event.name)
                    incomingSettling[event.name] = nil
                } else {
                    considerRenamedIn(event.name, now: now)
                }
            } else if event.watch == pendingWatch, let name = ItemFileName(parsing: event.name), name.kind == .json,
                      items[name.id] == nil
            {
                adopt(name, now: now)
            }
        }
        if rescan || now >= nextRescan {
            if rescan { log.warning("inotify queue overflowed; rescanning incoming/ and pending/") }
            try scanIncoming(now: now)
            try scanPending(now: now)
            nextRescan = now.adding(seconds: configuration.rescanSeconds)
        }
        if let check = nextSettleCheck, check <= now { recheckSettling(now: now) }
    }

    /// When the earliest settling file is to be looked at again.
    var nextSettleCheck: Timestamp? { incomingSettling.values.min() }

    /// A held file is looked at again this often (close-write announces it sooner).
    var heldFileRecheckSeconds: Double { max(configuration.settleSeconds, 1) }

    /// Lists incoming/ and judges every file in it (`considerScanned`).
    func scanIncoming(now: Timestamp) throws {
        var present = Set<String>()
        for entry in try spool.list(.incoming) where isCandidate(entry.name) {
            present.insert(entry.name)
            guard entry.type == .regular || entry.type == .unknown else {
                reportOnce(entry.name, "incoming/\(entry.name) is not a regular file (\(entry.type)); left alone")
                continue
            }
            considerScanned(entry.name, now: now)
        }
        reportedNames.formIntersection(present)
        incomingLooks = incomingLooks.filter { present.contains($0.key) }
        incomingSettling = incomingSettling.filter { present.contains($0.key) }
    }

    /// Looks again at the settling files whose time has come, without listing the folder.
    func recheckSettling(now: Timestamp) {
        for (name, at) in incomingSettling where at <= now { considerScanned(name, now: now) }
    }

    /// A file found by a scan, not announced by inotify: its writer may still be writing it in
    /// place. It is taken once its mtime is `--settle` old and no process holds it open for
    /// writing (asked with a read lease). Where the lease cannot be taken (another user's file
    /// without CAP_LEASE, a file system without leases), the fallback rule: its size and mtime
    /// stay the same across two looks `--settle` apart.
    func considerScanned(_ name: String, now: Timestamp) {
        incomingSettling[name] = nil
        guard let status = try? spool.fs.status(of: name, in: spool.descriptor(.incoming)) else {
            incomingLooks[name] = nil
            return  // vanished: a lost race
        }
        guard status.type == .regular else {
            reportOnce(name, "incoming/\(name) is not a regular file (\(status.type)); left alone")
            return
        }
        let settledAt = Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds).adding(seconds: configuration.settleSeconds)
        guard settledAt <= now else {
            incomingSettling[name] = settledAt
            return
        }
        switch askWriters(name) {
        case .noWriter:
            take(name)
        case .openForWriting:
            log.debug("incoming/\(name) is still open for writing; waiting for its writer to close it")
            incomingSettling[name] = now.adding(seconds: heldFileRecheckSeconds)
        case .unknown:
            let look = IncomingLook(size: status.size, modifiedMilliseconds: status.modifiedMilliseconds, since: now)
            var previous = incomingLooks[name]
            if previous.map({ $0.size != look.size || $0.modifiedMilliseconds != look.modifiedMilliseconds }) ?? true {
                previous = look
                incomingLooks[name] = look
            }
            let stableSince = previous?.since ?? now
            let stableUntil = stableSince.adding(seconds: configuration.settleSeconds)
            if configuration.settleSeconds == 0 || (stableSince < now && stableUntil <= now) {
                take(name)
            } else {
                incomingSettling[name] = stableUntil
            }
        case nil:
            take(name)  // could not be opened: ingest reports why, or it vanished
        }
    }

    /// A file renamed into incoming/: complete by the Maildir rule, unless a process still holds
    /// it open for writing (a writer may rename first and write after).
    func considerRenamedIn(_ name: String, now: Timestamp) {
        if askWriters(name) == .openForWriting {
            log.debug("incoming/\(name) was renamed in but is still open for writing; waiting for its writer")
            incomingSettling[name] = now.adding(seconds: heldFileRecheckSeconds)
        } else {
            take(name)
        }
    }

    private func take(_ name: String) {
        incomingAnnounced.insert(name)
        incomingSettling[name] = nil
        incomingLooks[name] = nil
    }

    /// Asks the kernel whether a writer holds the file (nil: it could not be opened). The first
    /// time the lease is refused, says once in the log which rule applies instead.
    private func askWriters(_ name: String) -> WriterCheck? {
        guard let answer = try? spool.fs.writerCheck(name, in: spool.descriptor(.incoming)) else { return nil }
        if case .unknown(let code) = answer, !reportedLeaseFallback {
            reportedLeaseFallback = true
            log.warning("""
                cannot ask whether files in incoming/ are still open for writing (read lease refused: \
                \(SystemError.message(for: code)); spoold needs to own them or hold CAP_LEASE): a file found \
                by a scan is taken once its size and mtime stay unchanged for --settle seconds
                """)
        }
        return answer
    }

    /// Adopts json files in pending/ the engine does not know (operator moves, another process).
    func scanPending(now: Timestamp) throws {
        for entry in try spool.list(.pending) {
            if let name = ItemFileName(parsing: entry.name), name.kind == .json, items[name.id] == nil { adopt(name, now: now) }
        }
    }

    func adopt(_ name: ItemFileName, now: Timestamp) {
        let location = ItemLocation(.pending, attempt: name.attempt)
        guard let status = try? spool.status(of: name, at: location), status.type == .regular else { return }
        let notBefore = min(Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds), now)
        items[name.id] = ItemLifecycle(location: location, notBefore: notBefore)
        due.push(.init(notBefore: notBefore, id: name.id))
        log.debug("adopted \(name.id) from pending/")
    }

    /// Turns announced files into items, in one durable batch.
    func ingest(now: Timestamp) throws {
        guard !incomingAnnounced.isEmpty else { return }
        var batch: [NewItem] = []
        var sidecars: [String: String] = [:]
        for name in incomingAnnounced.sorted().prefix(Engine.ingestBatchLimit) {
            incomingAnnounced.remove(name)
            incomingSettling[name] = nil
            if reportedNames.contains(name) { continue }
            let id = idGenerator.next(at: now, originalName: name)
            var metadata = ItemMetadata(
                id: id, originalName: name, size: 0, contentType: ContentType.guess(forFileName: name), createdAt: now)
            var state = ItemState.pending
            let sidecarName = name + SpoolFolder.sidecarSuffix
            do {
                if let bytes = try readSidecar(sidecarName) {
                    sidecars[id.rawValue] = sidecarName
                    let sidecar = try Sidecar.parse(bytes)
                    if let type = sidecar.contentType { metadata.contentType = type }
                    metadata.headers = sidecar.headers
                    metadata.fields = sidecar.fields
                    metadata.url = sidecar.url
                }
            } catch {
                state = .failed
                metadata.failureReason = "sidecar incoming/\(sidecarName): \(error)"
            }
            batch.append(NewItem(source: .incoming(name), metadata: metadata, state: state))
        }
        guard !batch.isEmpty else { return }
        let results = try spool.add(batch)
        for (item, result) in zip(batch, results) {
            let name: String = if case .incoming(let n) = item.source { n } else { "?" }
            switch result {
            case .added(let id):
                summary.ingested += 1
                if let sidecar = sidecars[id.rawValue] { try? spool.removeFile(sidecar, in: .incoming) }
                if item.state == .failed {
                    summary.failed += 1
                    log.warning("incoming/\(name) parked in failed/ as \(id): \(item.metadata.failureReason ?? "")")
                } else {
                    items[id] = ItemLifecycle(location: ItemLocation(.pending, attempt: 0), notBefore: now)
                    due.push(.init(notBefore: now, id: id))
                    log.debug("took incoming/\(name) as \(id)")
                }
            case .rejected(let reason):
                reportOnce(name, reason)
            }
        }
    }

    /// Dot-names are writers' work in progress (the Maildir rule); sidecars travel with their file.
    func isCandidate(_ name: String) -> Bool {
        !name.hasPrefix(".") && !name.hasSuffix(SpoolFolder.sidecarSuffix)
    }

    func reportOnce(_ name: String, _ message: String) {
        guard reportedNames.insert(name).inserted else { return }
        log.warning(message)
    }

    private func readSidecar(_ name: String) throws -> [UInt8]? {
        guard (try? spool.fs.status(of: name, in: spool.descriptor(.incoming))) != nil else { return nil }
        return try spool.readSmallFile(name, in: .incoming, limit: Sidecar.maximumSize)
    }
}
