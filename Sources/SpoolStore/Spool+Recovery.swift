import SpoolCore
import SpoolSystem

/// Start-up recovery's side of the spool: reading the state folders and tmp/ into `RecoveryPlanner`
/// input (setting aside what is not a regular file, removing what is no item's in tmp/), slicing
/// the spool by id, and carrying out the planner's repairs. The planning is pure (`SpoolCore`);
/// what to do with the items and what to tell the operator is the caller's (the engine's
/// `SpoolRecovery`): the store names, renames and removes, and says what it did.
extension Spool {
    /// Files a slice holds at most when the whole spool is read (recovery of a damaged index,
    /// `spoold check`): about 25 MiB of memory for the slice's files and plan.
    public static let recoveryFilesPerSlice = 80_000

    /// The item files of every state folder and tmp/ whose ids are in `slice` (and, in its first
    /// slice, the names that are no item's), read name by name: a spool read a slice at a time
    /// holds one slice of it. Non-item names in tmp/ are removed (they are ours and unfinished);
    /// entries that are not regular files where item files belong (a folder named like an item's
    /// json, a FIFO in tmp/) are set aside in `SPOOL/corrupt/`. `now` names what is set aside;
    /// `found` is told each entry that is no item's and what became of it, as it happens.
    public func recoveryScan(
        of slice: IDSlice = .all, now: Timestamp, found: (RecoveryFinding) -> Void
    ) throws -> [RecoveryPlanner.FoundFile] {
        try recoveryScan(of: slice, repairing: true, now: now, found: found)
    }

    /// `recoveryScan`; with `repairing` false nothing is changed: the names are only found.
    func recoveryScan(
        of slice: IDSlice, repairing: Bool, now: Timestamp, found: (RecoveryFinding) -> Void
    ) throws -> [RecoveryPlanner.FoundFile] {
        var files: [RecoveryPlanner.FoundFile] = []
        for folder in [SpoolFolder.pending, .inflight, .failed, .done, .tmp] {
            try forEachEntry(in: folder) { entry, type in
                if let shape = ItemFileName.shape(of: entry) {
                    guard slice.contains(UnsafeRawBufferPointer(rebasing: entry[0..<shape.idLength])) else { return true }
                } else if !slice.isFirst {
                    return true  // no item's: the first slice sees it
                }
                consider(String(decoding: entry, as: UTF8.self), type, in: folder, repairing: repairing, now: now, files: &files, found: found)
                return true
            }
        }
        return files
    }

    /// Slices of the ids in the spool, each holding about `filesPerSlice` item files, in id order:
    /// one read of every folder's names counts the item files and keeps a sample of 4,096 ids,
    /// whose quantiles bound the slices. A spool of up to `filesPerSlice` files is one slice.
    /// Recovery plans each id on its own (`RecoveryPlanner`), so reading a slice at a time
    /// finds and repairs exactly what reading the whole spool at once would, in the same order.
    public func recoverySlices(filesPerSlice: Int) throws -> [IDSlice] {
        var sample: [[UInt8]] = []
        let sampleSize = 4096
        var files = 0
        var random = SystemRandomNumberGenerator()
        for folder in [SpoolFolder.pending, .inflight, .failed, .done, .tmp] {
            try forEachEntry(in: folder) { entry, _ in
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
    /// everything. So a start costs the same whatever the queue holds. Entries that are no item's
    /// are handled, and told to `found`, as `recoveryScan` does.
    public func inFlightRecoveryScan(
        lastRecords: [ItemID: IndexRecord], now: Timestamp, found: (RecoveryFinding) -> Void
    ) throws -> [RecoveryPlanner.FoundFile] {
        var files: [RecoveryPlanner.FoundFile] = []
        for folder in [SpoolFolder.inflight, .tmp] {
            for entry in try list(folder) {
                consider(entry.name, entry.type, in: folder, repairing: true, now: now, files: &files, found: found)
            }
        }
        var attempts: [ItemID: Set<Int>] = [:]
        for (id, record) in lastRecords {
            for location in [record.from, record.to].compactMap({ $0 }) { attempts[id, default: []].insert(location.attempt) }
        }
        for file in files { attempts[file.name.id, default: []].insert(file.name.attempt) }
        for (id, known) in attempts.sorted(by: { $0.key < $1.key }) {
            let probed = Set(known.flatMap { [$0 - 1, $0, $0 + 1] }).filter { (0...ItemFileName.maximumAttempt).contains($0) }
            for folder in [SpoolFolder.pending, .failed, .done] {
                for attempt in probed.sorted() {
                    for kind in [ItemFileName.Kind.json, .blob] {
                        let name = ItemFileName(id: id, attempt: attempt, kind: kind).description
                        guard let status = try? self.status(of: name, in: folder) else { continue }
                        consider(name, status.type, in: folder, repairing: true, now: now, files: &files, found: found)
                    }
                }
            }
        }
        return files
    }

    /// One entry of a folder: an item file is found; an entry named like one (or anything in
    /// tmp/) that is not a regular file is set aside in `SPOOL/corrupt/`; other names in tmp/ are
    /// removed (ours and unfinished); `found` is told each. With `repairing` false nothing is
    /// changed: those names are only found.
    private func consider(
        _ entryName: String, _ entryType: FileStatus.FileType, in folder: SpoolFolder, repairing: Bool, now: Timestamp,
        files: inout [RecoveryPlanner.FoundFile], found: (RecoveryFinding) -> Void
    ) {
        let name = ItemFileName(parsing: entryName)
        // Only a name that matters is stat'ed where readdir did not say (d_type unknown).
        var type = entryType
        if type == .unknown, name != nil || folder == .tmp {
            guard let status = try? self.status(of: entryName, in: folder) else { return }
            type = status.type
        }
        if let name, type == .regular, folder == .tmp, name.kind == .json, (try? readMetadata(named: entryName, in: .tmp)) == nil {
            // A staged json is fsynced before any record names it; one that does not parse was
            // cut by a power loss before that (a recovery's own rewrite, say): it vouches for
            // nothing, and taking it over the item's blob would park the item in failed/.
            if repairing { try? removeFile(entryName, in: .tmp) }
            found(.tmpStray("tmp/\(entryName)"))
        } else if let name, type == .regular {
            files.append(.init(folder == .tmp ? .tmp : .state(folder.state!), name))
        } else if name != nil || (folder == .tmp && type != .regular) {
            // Unusable, and not ours to delete: one such entry must not stop every start.
            let label = "\(folder.rawValue)/\(entryName)"
            guard repairing else { return found(.notRegular(label, type)) }
            do {
                found(.setAside(label, type, aside: try setAside(entryName, in: folder, now: now)))
            } catch let error as SystemError where error.isNotFound {
            } catch {
                // Not an item either way; never a reason to stop (a full disk, a read-only corrupt/).
                found(.notSetAside(label, type, reason: "\(error)"))
            }
        } else if folder == .tmp {
            if repairing { try? removeFile(entryName, in: .tmp) }
            found(.tmpStray("tmp/\(entryName)"))
        } else if !entryName.hasPrefix(".") {
            found(.notAnItemFile("\(folder.rawValue)/\(entryName)"))
        }
    }

    /// Carries out a recovery plan's repairs in order, then makes them durable with one fsync of
    /// every folder. Each repair is safe to do again: a crash in here is planned again at the next
    /// start.
    public func perform(_ repairs: [RecoveryPlan.Repair], now: Timestamp) throws {
        guard !repairs.isEmpty else { return }
        for repair in repairs {
            switch repair {
            case .moveFile(let name, let from, let to, let place):
                try moveFile(name.description, from: SpoolFolder(from), to: to.description, in: SpoolFolder(place))
            case .removeFile(let name, let place):
                try removeFile(name.description, in: SpoolFolder(place))
            case .recreateMetadata(let id, let location):
                let blob = ItemFileName(id: id, attempt: location.attempt, kind: .blob)
                let size = (try? status(of: blob, at: location))?.size ?? 0
                // The id's time, not now: the URL's date parts stay the item's.
                var metadata = ItemMetadata(
                    id: id, originalName: Spool.originalNameHint(id), size: size, contentType: "application/octet-stream",
                    createdAt: id.createdAt ?? now)
                // A blob sent straight from incoming/ when the process stopped keeps its path there.
                if let bytes = directSourceName(of: blob, at: location) {
                    let name = FileName.decode(bytes)
                    metadata.setOriginalName(name)
                    let leaf = name.split(separator: "/").last.map(String.init) ?? name
                    metadata.contentType = ContentType.guess(forFileName: FileName.display(leaf))
                }
                if location.state == .failed { metadata.setFailure(FailureReason(.metadata, "metadata was lost in a crash and recreated")) }
                try writeMetadata(metadata, named: ItemFileName(id: id, attempt: location.attempt, kind: .json).description,
                                  in: SpoolFolder(location.state))
            case .quarantineMissingBlob(let id, let from, let to):
                var metadata = try? readMetadata(id, at: from)
                metadata?.setFailure(FailureReason(.blobMissing, "its payload (.blob) was missing at start-up"))
                try quarantine(id, from: from, to: to, metadata: metadata)
            }
            CrashPoint.recoveryAfterRepair.reached()
        }
        try syncFolders(Set(SpoolFolder.allCases))
    }

    /// What start-up recovery would do, found without changing anything, a slice of ids at a time
    /// as a whole recovery reads the spool: `body` gets each slice's findings, in id order (only
    /// the first has the names that are no item's), from the same read and the same planner.
    /// `progress` is told the slice about to be read and how many there are.
    public func inspectRecovery(
        filesPerSlice: Int = Spool.recoveryFilesPerSlice, progress: ((Int, Int) -> Void)? = nil,
        _ body: (RecoveryInspection) throws -> Void
    ) throws {
        let index = try self.index.inspect()
        let slices = try recoverySlices(filesPerSlice: filesPerSlice)
        for (number, slice) in slices.enumerated() {
            progress?(number, slices.count)
            var tmpStrays: [String] = []
            var notRegular: [String] = []
            let files = try recoveryScan(of: slice, repairing: false, now: Timestamp(millisecondsSinceEpoch: 0)) {
                switch $0 {
                case .tmpStray(let name): tmpStrays.append(name)
                case .notRegular(let name, _): notRegular.append(name)
                case .setAside, .notSetAside, .notAnItemFile: break
                }
            }
            let records = slices.count == 1 ? index.lastByItem : index.lastByItem.filter { slice.contains($0.key) }
            let plan = RecoveryPlanner.plan(files: files, lastRecords: records)
            var interrupted: [ItemID: ItemLocation] = [:]
            for (id, location) in plan.items where location.state == .inflight { interrupted[id] = location }
            try body(RecoveryInspection(
                indexDamage: index.damage, indexIsRegularFile: index.isRegularFile, plan: plan, interrupted: interrupted,
                tmpStrays: tmpStrays, notRegular: notRegular))
        }
    }

    /// Moves every name in a state folder that is not an item file into corrupt/ (`spoold check
    /// --repair`; a daemon leaves them alone), as recovery does with entries it cannot use: kept
    /// for the operator, never deleted. One the operator removed meanwhile is a lost race, not an
    /// error. Returns each name (`<folder>/<name>`) with where it went.
    public func setStraysAside(now: Timestamp) throws -> [(stray: String, aside: String)] {
        var setAside: [(stray: String, aside: String)] = []
        for stray in try SpoolInventory.strays(in: self) {
            guard let slash = stray.firstIndex(of: "/"), let folder = SpoolFolder(rawValue: String(stray[..<slash])) else { continue }
            let name = String(stray[stray.index(after: slash)...])
            do {
                setAside.append((stray, try self.setAside(name, in: folder, now: now)))
            } catch let error as SystemError where error.errno == .noSuchFileOrDirectory {
                continue
            }
        }
        return setAside
    }

    /// The name hint inside an id (`…-9f3ab2c1-photo.jpg` → `photo.jpg`), or the id itself.
    static func originalNameHint(_ id: ItemID) -> String {
        let parts = id.rawValue.split(separator: "-", maxSplits: 3)
        return parts.count == 4 ? String(parts[3]) : id.rawValue
    }
}
