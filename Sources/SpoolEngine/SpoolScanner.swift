import SpoolCore
import SpoolStore
import SpoolSystem

/// Reading a whole spool into `RecoveryPlanner` input, and carrying out its repairs.
enum SpoolScanner {
    /// The item files of every state folder and tmp/. Non-item names in tmp/ are removed (they are
    /// ours and unfinished); with `log` nil nothing is changed and they are returned in `tmpStrays`.
    static func itemFiles(in spool: Spool, log: EventLog?) throws -> [RecoveryPlanner.FoundFile] {
        var ignored: [String] = []
        return try itemFiles(in: spool, log: log, tmpStrays: &ignored)
    }

    static func itemFiles(in spool: Spool, log: EventLog?, tmpStrays: inout [String]) throws -> [RecoveryPlanner.FoundFile] {
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
                    if log == nil { tmpStrays.append("tmp/\(entry.name)") } else { try? spool.removeFile(entry.name, in: .tmp) }
                } else if !entry.name.hasPrefix(".") {
                    log?.warning("\(folder.rawValue)/\(entry.name) is not an item file (expected <id>.a<N>.json/.blob); left alone")
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
            CrashPoint.recoveryAfterRepair.reached()
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
