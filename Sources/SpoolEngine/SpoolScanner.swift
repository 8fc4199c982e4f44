import SpoolCore
import SpoolStore
import SpoolSystem

/// A range of ids, `[lower, upper)` by their bytes (nil: open), for reading a spool a slice at a time.
public struct IDSlice: Equatable, Sendable {
    public var lower: [UInt8]?
    public var upper: [UInt8]?

    public static let all = IDSlice(lower: nil, upper: nil)

    /// The first slice also reads the names that are no item's (in tmp/, in the state folders).
    public var isFirst: Bool { lower == nil }

    func contains(_ id: UnsafeRawBufferPointer) -> Bool {
        if let lower, id.lexicographicallyPrecedes(lower) { return false }
        if let upper, !id.lexicographicallyPrecedes(upper) { return false }
        return true
    }

    /// Whether an id from the index falls in the slice.
    func contains(_ id: ItemID) -> Bool {
        var text = id.rawValue
        return text.withUTF8 { contains(UnsafeRawBufferPointer($0)) }
    }
}

/// Reading a whole spool into `RecoveryPlanner` input, and carrying out its repairs.
enum SpoolScanner {
    /// The item files of every state folder and tmp/. Non-item names in tmp/ are removed (they are
    /// ours and unfinished); entries that are not regular files where item files belong (a folder
    /// named like an item's json, a FIFO in tmp/) are set aside in `SPOOL/corrupt/`. With `log` nil
    /// nothing is changed: those names are returned in `tmpStrays` and `notRegular` instead.
    static func itemFiles(in spool: Spool, log: EventLog?, now: Timestamp) throws -> [RecoveryPlanner.FoundFile] {
        var strays: [String] = []
        var notRegular: [String] = []
        return try itemFiles(in: spool, log: log, now: now, tmpStrays: &strays, notRegular: &notRegular)
    }

    /// `slice`: only the files of the ids in it (and, in its first slice, the names in tmp/ that
    /// are no item's), read name by name: a spool read a slice at a time holds one slice of it.
    static func itemFiles(
        in spool: Spool, log: EventLog?, now: Timestamp, tmpStrays: inout [String], notRegular: inout [String],
        slice: IDSlice = .all
    ) throws -> [RecoveryPlanner.FoundFile] {
        var found: [RecoveryPlanner.FoundFile] = []
        for folder in [SpoolFolder.pending, .inflight, .failed, .done, .tmp] {
            try spool.forEachEntry(in: folder) { entry, type in
                if let shape = ItemFileName.shape(of: entry) {
                    guard slice.contains(UnsafeRawBufferPointer(rebasing: entry[0..<shape.idLength])) else { return true }
                } else if !slice.isFirst {
                    return true  // no item's: the first slice sees it
                }
                consider(String(decoding: entry, as: UTF8.self), type, in: folder, spool: spool, log: log, now: now, found: &found,
                         tmpStrays: &tmpStrays, notRegular: &notRegular)
                return true
            }
        }
        return found
    }

    /// Slices of the ids in the spool, each holding about `filesPerSlice` item files, in id order:
    /// one read of every folder's names counts the item files and keeps a sample of 4,096 ids,
    /// whose quantiles bound the slices. A spool of up to `filesPerSlice` files is one slice.
    /// Recovery plans each id on its own (`RecoveryPlanner`), so reading a slice at a time
    /// finds and repairs exactly what reading the whole spool at once would, in the same order.
    static func slices(of spool: Spool, filesPerSlice: Int) throws -> [IDSlice] {
        var sample: [[UInt8]] = []
        let sampleSize = 4096
        var files = 0
        var random = SystemRandomNumberGenerator()
        for folder in [SpoolFolder.pending, .inflight, .failed, .done, .tmp] {
            try spool.forEachEntry(in: folder) { entry, _ in
                guard let shape = ItemFileName.shape(of: entry) else { return true }
                files += 1
                // Reservoir sampling: every file has the same chance to be in the sample.
                let slot = files <= sampleSize ? sample.count : Int.random(in: 0..<files, using: &random)
                if slot < sampleSize {
                    let id = Array(UnsafeRawBufferPointer(rebasing: entry[0..<shape.idLength]))
                    if slot == sample.count { sample.append(id) } else { sample[slot] = id }
                }
                return true
            }
        }
        guard files > filesPerSlice else { return [.all] }
        sample.sort { $0.lexicographicallyPrecedes($1) }
        let count = min(sample.count, (files + filesPerSlice - 1) / filesPerSlice)
        var bounds: [[UInt8]] = []
        for i in 1..<count {
            let bound = sample[i * sample.count / count]
            if bounds.last != bound { bounds.append(bound) }
        }
        var slices: [IDSlice] = []
        var lower: [UInt8]?
        for bound in bounds + [nil] as [[UInt8]?] {
            slices.append(IDSlice(lower: lower, upper: bound))
            lower = bound
        }
        return slices
    }

    /// The item files start-up recovery must see, without reading the whole spool: everything in
    /// inflight/ and tmp/ (uploads a stop interrupted, half-made adds and rewrites), and, for each
    /// item those hold or the index names (every transition that may be under way), its files in
    /// pending/, failed/ and done/ at the attempt numbers named and the ones beside them (a claim
    /// whose renames were lost sits one attempt below the record after it). An item nothing names
    /// is a whole pair where it sits: the pass over pending/ reads it, and `spoold check` reads
    /// everything. So a start costs the same whatever the queue holds.
    static func inFlightItemFiles(
        in spool: Spool, lastRecords: [ItemID: IndexRecord], log: EventLog, now: Timestamp
    ) throws -> [RecoveryPlanner.FoundFile] {
        var found: [RecoveryPlanner.FoundFile] = []
        var strays: [String] = []
        var notRegular: [String] = []
        for folder in [SpoolFolder.inflight, .tmp] {
            for entry in try spool.list(folder) {
                consider(entry.name, entry.type, in: folder, spool: spool, log: log, now: now, found: &found, tmpStrays: &strays,
                         notRegular: &notRegular)
            }
        }
        var attempts: [ItemID: Set<Int>] = [:]
        for (id, record) in lastRecords {
            for location in [record.from, record.to].compactMap({ $0 }) { attempts[id, default: []].insert(location.attempt) }
        }
        for file in found { attempts[file.name.id, default: []].insert(file.name.attempt) }
        for (id, known) in attempts.sorted(by: { $0.key < $1.key }) {
            let probed = Set(known.flatMap { [$0 - 1, $0, $0 + 1] }).filter { (0...ItemFileName.maximumAttempt).contains($0) }
            for folder in [SpoolFolder.pending, .failed, .done] {
                for attempt in probed.sorted() {
                    for kind in [ItemFileName.Kind.json, .blob] {
                        let name = ItemFileName(id: id, attempt: attempt, kind: kind).description
                        guard let status = try? spool.status(of: name, in: folder) else { continue }
                        consider(name, status.type, in: folder, spool: spool, log: log, now: now, found: &found, tmpStrays: &strays,
                                 notRegular: &notRegular)
                    }
                }
            }
        }
        return found
    }

    /// One entry of a folder: an item file is found; an entry named like one (or anything in
    /// tmp/) that is not a regular file is set aside in `SPOOL/corrupt/`; other names in tmp/ are
    /// removed (ours and unfinished). With `log` nil nothing is changed: those names are returned
    /// in `tmpStrays` and `notRegular` instead.
    private static func consider(
        _ entryName: String, _ entryType: FileStatus.FileType, in folder: SpoolFolder, spool: Spool, log: EventLog?, now: Timestamp,
        found: inout [RecoveryPlanner.FoundFile], tmpStrays: inout [String], notRegular: inout [String]
    ) {
        let name = ItemFileName(parsing: entryName)
        // Only a name that matters is stat'ed where readdir did not say (d_type unknown).
        var type = entryType
        if type == .unknown, name != nil || folder == .tmp {
            guard let status = try? spool.status(of: entryName, in: folder) else { return }
            type = status.type
        }
        if let name, type == .regular, folder == .tmp, name.kind == .json, (try? spool.readMetadata(named: entryName, in: .tmp)) == nil {
            // A staged json is fsynced before any record names it; one that does not parse was
            // cut by a power loss before that (a recovery's own rewrite, say): it vouches for
            // nothing, and taking it over the item's blob would park the item in failed/.
            if log == nil { tmpStrays.append("tmp/\(entryName)") } else { try? spool.removeFile(entryName, in: .tmp) }
        } else if let name, type == .regular {
            found.append(.init(folder == .tmp ? .tmp : .state(folder.state!), name))
        } else if name != nil || (folder == .tmp && type != .regular) {
            // Unusable, and not ours to delete: one such entry must not stop every start.
            let label = "\(folder.rawValue)/\(entryName)"
            guard let log else { notRegular.append(label); return }
            do {
                let aside = try spool.setAside(entryName, in: folder, now: now)
                log.warning("\(label) is not a regular file (\(type)); set it aside as \(aside)")
            } catch let error as SystemError where error.isNotFound {
            } catch {
                // Not an item either way; never a reason to stop (a full disk, a read-only corrupt/).
                log.warning("\(label) is not a regular file (\(type)); could not set it aside (\(error)); left alone")
            }
        } else if folder == .tmp {
            if log == nil { tmpStrays.append("tmp/\(entryName)") } else { try? spool.removeFile(entryName, in: .tmp) }
        } else if !entryName.hasPrefix(".") {
            log?.warning("\(folder.rawValue)/\(entryName) is not an item file (expected <id>.a<N>.json/.blob); left alone")
        }
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
                // The id's time, not now: the URL's date parts stay the item's.
                var metadata = ItemMetadata(
                    id: id, originalName: originalNameHint(id), size: size, contentType: "application/octet-stream",
                    createdAt: id.createdAt ?? now)
                // A blob sent straight from incoming/ when the process stopped keeps its path there.
                if let bytes = spool.directSourceName(of: blob, at: location) {
                    let name = FileName.decode(bytes)
                    metadata.setOriginalName(name)
                    metadata.contentType = ContentType.guess(forFileName: FileName.display(IncomingFile(path: name).name))
                }
                if location.state == .failed { metadata.setFailure(FailureReason(.metadata, "metadata was lost in a crash and recreated")) }
                try spool.writeMetadata(metadata, named: ItemFileName(id: id, attempt: location.attempt, kind: .json).description,
                                        in: SpoolFolder(location.state))
            case .quarantineMissingBlob(let id, let from, let to):
                var metadata = try? spool.readMetadata(id, at: from)
                metadata?.setFailure(FailureReason(.blobMissing, "its payload (.blob) was missing at start-up"))
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
