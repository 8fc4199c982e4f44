import SpoolCore
import SpoolStore
import SpoolSystem

extension Engine {
    /// Start-up recovery (RELIABILITY rule 7): read the index, plan repairs from the folders, do
    /// them, return interrupted uploads to pending (count kept), then load the queue.
    func recover() throws {
        let now = clock.now()
        let opened = try spool.index.openAndRecover(now: now)
        if opened.report.truncatedBytes > 0 {
            log.warning("index.wal: cut \(opened.report.truncatedBytes) bytes of torn tail (the normal trace of a crash)")
        }
        if let aside = opened.report.setAsideAs {
            log.warning("index.wal was damaged before its end; kept it as \(aside) and rebuilt the state from the folders")
        }
        let plan = RecoveryPlanner.plan(files: try SpoolScanner.itemFiles(in: spool, log: log), lastRecords: opened.lastByItem)
        for note in plan.notes { log.warning("recovery: \(note)") }
        try SpoolScanner.perform(plan.repairs, on: spool, now: now)
        summary.repaired = plan.notes.count

        var interrupted: [SpoolTransition] = []
        for (id, location) in plan.items {
            switch location.state {
            case .pending:
                let json = ItemFileName(id: id, attempt: location.attempt, kind: .json)
                let mtime = (try? spool.status(of: json, at: location))?.modifiedMilliseconds ?? now.millisecondsSinceEpoch
                let notBefore = Timestamp(millisecondsSinceEpoch: mtime)
                items[id] = ItemLifecycle(location: location, notBefore: notBefore)
                due.push(.init(notBefore: notBefore, id: id))
            case .inflight:
                var lifecycle = ItemLifecycle(location: location, notBefore: now)
                let action = lifecycle.recoverInterrupted(policy: configuration.policy, now: now)
                var metadata = try? spool.readMetadata(id, at: location)
                metadata?.attempts.append(AttemptRecord(
                    number: location.attempt, startedAt: now, finishedAt: now, outcome: "interrupted",
                    error: "spoold stopped during this attempt (crash or kill); it counts"))
                switch action {
                case .requeue(let from, let to, let notBefore):
                    interrupted.append(SpoolTransition(IndexRecord(.requeue, id, from: from, to: to), metadata: metadata, notBefore: notBefore))
                    items[id] = lifecycle
                    due.push(.init(notBefore: notBefore, id: id))
                case .fail(let from, let to, let reason):
                    metadata?.failureReason = reason
                    interrupted.append(SpoolTransition(IndexRecord(.fail, id, from: from, to: to), metadata: metadata))
                    summary.failed += 1
                default:
                    preconditionFailure("recovery only requeues or fails")
                }
            case .failed, .done:
                break
            }
        }
        if !interrupted.isEmpty {
            _ = try spool.commit(interrupted)
            log.info("recovery: \(interrupted.count) upload(s) interrupted by the last stop were returned to pending/ (attempts kept)")
        }
        try spool.index.compact(live: liveRecords())
        log.info("spool \(spool.path): \(items.count) item(s) queued")
    }
}

/// Reading a whole spool into `RecoveryPlanner` input, and carrying out its repairs.
enum SpoolScanner {
    static func itemFiles(in spool: Spool, log: EventLog) throws -> [RecoveryPlanner.FoundFile] {
        var found: [RecoveryPlanner.FoundFile] = []
        let places: [(SpoolFolder, SpoolPlace)] = [
            (.pending, .state(.pending)), (.inflight, .state(.inflight)), (.failed, .state(.failed)),
            (.done, .state(.done)), (.tmp, .tmp),
        ]
        for (folder, place) in places {
            for entry in try spool.list(folder) {
                if let name = ItemFileName(parsing: entry.name), entry.type == .regular || entry.type == .unknown {
                    found.append(.init(place, name))
                } else if folder == .tmp {
                    try? spool.removeFile(entry.name, in: .tmp)
                } else if !entry.name.hasPrefix(".") {
                    log.warning("\(folder.rawValue)/\(entry.name) is not an item file (expected <id>.a<N>.json/.blob); left alone")
                }
            }
        }
        return found
    }

    static func perform(_ repairs: [RecoveryPlan.Repair], on spool: Spool, now: Timestamp) throws {
        guard !repairs.isEmpty else { return }
        for repair in repairs {
            switch repair {
            case .moveFile(let name, let from, let to, let place):
                try spool.moveFile(name.description, from: folder(from), to: to.description, in: folder(place))
            case .removeFile(let name, let place):
                try spool.removeFile(name.description, in: folder(place))
            case .recreateMetadata(let id, let location):
                let blob = ItemFileName(id: id, attempt: location.attempt, kind: .blob)
                let size = (try? spool.status(of: blob, at: location))?.size ?? 0
                var metadata = ItemMetadata(
                    id: id, originalName: originalNameHint(id), size: size, contentType: "application/octet-stream",
                    createdAt: now)
                metadata.failureReason = location.state == .failed ? "metadata was lost in a crash and recreated" : nil
                try spool.writeMetadata(metadata, named: ItemFileName(id: id, attempt: location.attempt, kind: .json).description,
                                        in: SpoolFolder(location.state))
            case .quarantineMissingBlob(let id, let from, let to):
                var metadata = try? spool.readMetadata(id, at: from)
                metadata?.failureReason = "its payload (.blob) was missing at start-up"
                try spool.quarantine(id, from: from, to: to, metadata: metadata)
            }
        }
        try spool.syncFolders(Set(SpoolFolder.allCases))
    }

    static func folder(_ place: SpoolPlace) -> SpoolFolder {
        switch place {
        case .tmp: .tmp
        case .state(let s): SpoolFolder(s)
        }
    }

    /// The name hint inside an id (`…-9f3ab2c1-photo.jpg` → `photo.jpg`), or the id itself.
    static func originalNameHint(_ id: ItemID) -> String {
        let parts = id.rawValue.split(separator: "-", maxSplits: 3)
        return parts.count == 4 ? String(parts[3]) : id.rawValue
    }
}
