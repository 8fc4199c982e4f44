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
                if isCandidate(event.name) { incomingAnnounced.insert(event.name) }
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
        if let check = nextSettleCheck, check <= now { try scanIncoming(now: now) }
    }

    /// Files a writer may have been writing in place: taken only once they are older than the
    /// settle time. Files announced by inotify (closed or renamed in) are taken at once.
    func scanIncoming(now: Timestamp) throws {
        incomingSettling.removeAll()
        nextSettleCheck = nil
        var present = Set<String>()
        for entry in try spool.list(.incoming) where isCandidate(entry.name) {
            present.insert(entry.name)
            guard entry.type == .regular || entry.type == .unknown else {
                reportOnce(entry.name, "incoming/\(entry.name) is not a regular file (\(entry.type)); left alone")
                continue
            }
            guard let status = try? spool.fs.status(of: entry.name, in: spool.descriptor(.incoming)) else { continue }
            guard status.type == .regular else {
                reportOnce(entry.name, "incoming/\(entry.name) is not a regular file (\(status.type)); left alone")
                continue
            }
            let settledAt = Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds).adding(seconds: configuration.settleSeconds)
            if settledAt <= now {
                incomingAnnounced.insert(entry.name)
            } else {
                incomingSettling.insert(entry.name)
                nextSettleCheck = min(nextSettleCheck ?? settledAt, settledAt)
            }
        }
        reportedNames.formIntersection(present)
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
        observers.itemQueued(name.id, at: location)
        log.debug("adopted \(name.id) from pending/")
    }

    /// Turns announced files into items, in one durable batch.
    func ingest(now: Timestamp) throws {
        guard !incomingAnnounced.isEmpty else { return }
        var batch: [NewItem] = []
        var sidecars: [String: String] = [:]
        for name in incomingAnnounced.sorted().prefix(Engine.ingestBatchLimit) {
            // Full (--max-spool-size): this and later files wait, announced, in incoming/.
            if let sizeGate, try !sizeGate.admits(name, engine: self, now: now) { break }
            incomingAnnounced.remove(name)
            incomingSettling.remove(name)
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
                    observers.itemQueued(id, at: ItemLocation(.pending, attempt: 0))
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
