/// Start-up recovery (docs/guarantees.md "Crash safety": idempotent, every item kept or set aside) as a pure function of what is on disk.
///
/// The directories are the truth; the index's last record per item says which way a transition
/// was going when a crash split a pair. For each item the planner picks one target location
/// (the recorded intent if the files show it was under way, else the furthest state found),
/// gathers the json and the blob there, and removes every other copy. Items whose success was
/// recorded are removed, never uploaded again.
public enum RecoveryPlanner {
    public struct FoundFile: Hashable, Sendable {
        public var place: SpoolPlace
        public var name: ItemFileName
        public init(_ place: SpoolPlace, _ name: ItemFileName) {
            self.place = place
            self.name = name
        }

        var location: ItemLocation? {
            guard case .state(let s) = place else { return nil }
            return ItemLocation(s, attempt: name.attempt)
        }
    }

    public static func plan(files: [FoundFile], lastRecords: [ItemID: IndexRecord]) -> RecoveryPlan {
        var byID: [ItemID: [FoundFile]] = [:]
        byID.reserveCapacity(files.count / 2)
        for file in files { byID[file.name.id, default: []].append(file) }
        var plan = RecoveryPlan()
        plan.items.reserveCapacity(byID.count)
        var needsWork: [ItemID] = []
        for (id, found) in byID {
            if let location = intactPair(found, last: lastRecords[id]) {
                plan.items[id] = location
            } else {
                needsWork.append(id)
            }
        }
        // Sorted so that repairs and notes come in a stable order.
        for id in needsWork.sorted() {
            planItem(id, files: byID[id]!, last: lastRecords[id], into: &plan)
        }
        return plan
    }

    /// The common case, decided without sets or sorting: a json and a blob with one attempt number
    /// in one state folder, and no index record pointing anywhere else.
    private static func intactPair(_ files: [FoundFile], last: IndexRecord?) -> ItemLocation? {
        guard files.count == 2, files[0].name.kind != files[1].name.kind, files[0].place == files[1].place,
              files[0].name.attempt == files[1].name.attempt, let location = files[0].location
        else { return nil }
        guard let last else { return location }
        return last.to == location ? location : nil
    }

    /// Whether a recorded claim or success must be completed although no file reached its target:
    /// a claim whose files are still where it started (its renames were lost), or a success whose
    /// files are anywhere before it (even a lost claim beneath a lost success).
    private static func isForced(_ last: IndexRecord, _ locations: Set<ItemLocation>) -> Bool {
        guard last.operation.isCompletedFromIndex, let from = last.from else { return false }
        if last.operation == .claim { return locations.contains(from) }
        return locations.contains { $0.progressRank <= from.progressRank }
    }

    /// Whether the furthest files of an item sit in pending/ one attempt before `from`, an attempt
    /// in inflight/: where the claim of that attempt found them.
    private static func lagsBehindClaim(of from: ItemLocation, _ locations: Set<ItemLocation>) -> Bool {
        from.state == .inflight && from.attempt >= 1
            && locations.max(by: { $0.progressRank < $1.progressRank }) == ItemLocation(.pending, attempt: from.attempt - 1)
    }

    private static func planItem(_ id: ItemID, files: [FoundFile], last: IndexRecord?, into plan: inout RecoveryPlan) {
        let placed = files.filter { $0.location != nil }

        // Success (or a purge) was recorded: whatever is left must go, or it would be sent again.
        if let last, last.to == nil, last.operation == .done || last.operation == .purge {
            for f in files { plan.repairs.append(.removeFile(f.name, in: f.place)) }
            plan.notes.append("\(id): \(last.operation.rawValue) was recorded; removed \(files.count) leftover file(s)")
            return
        }

        guard !placed.isEmpty else {
            // Only staging copies: an add that never committed (nothing was acknowledged).
            for f in files { plan.repairs.append(.removeFile(f.name, in: f.place)) }
            plan.notes.append("\(id): removed \(files.count) orphan file(s) from tmp/")
            return
        }

        let locations = Set(placed.compactMap(\.location))
        var target = locations.max { $0.progressRank < $1.progressRank }!
        // Complete a recorded move once it has started (a file already sits at its target). A move
        // that never started is undone by leaving the pair where it is, which is always safe and
        // keeps an operator's `mv` back into pending/ (items moved by hand are adopted). Two moves are completed from the
        // index alone, wherever the files are: a claim (its record, written before the request
        // goes out, is what counts the attempt) and a recorded success (never uploaded again).
        // That is why `Spool.commit` does not fsync folders for them.
        if let last, let intent = last.to, locations.contains(intent) || isForced(last, locations) {
            target = intent
        } else if let last, last.operation == .requeue || last.operation == .fail, let from = last.from,
                  lagsBehindClaim(of: from, locations)
        {
            // The files are where the claim of `from` found them: its renames were lost (they
            // need no folder fsync) and a later record of that attempt, a requeue or a failure
            // whose move never started, is the last. The claim was durable before it: the item
            // is where the claim put it, so the attempt stays counted.
            target = from
        }

        let jsonAtTarget = ItemFileName(id: id, attempt: target.attempt, kind: .json)
        let blobAtTarget = ItemFileName(id: id, attempt: target.attempt, kind: .blob)
        let targetPlace = SpoolPlace.state(target.state)
        var kept = Set<FoundFile>()
        var repaired = false

        // A transition that rewrites the json stages the new contents in tmp/ (fsynced) before its
        // index record; while the old json still sits at the recorded `from`, the staged one is the
        // newer (it carries the attempt just made, the failure reason), so it wins.
        var staged: FoundFile?
        if let last, let from = last.from, last.to != nil, target == last.to,
           files.contains(where: { $0.location == from && $0.name.kind == .json }) {
            staged = files.first { $0.place == .tmp && $0.name.kind == .json && $0.name.attempt == from.attempt }
        }

        func gather(_ kind: ItemFileName.Kind, as wanted: ItemFileName) -> Bool {
            if let here = files.first(where: { $0.place == targetPlace && $0.name == wanted }) {
                kept.insert(here)
                return true
            }
            if kind == .json, let staged {
                plan.repairs.append(.moveFile(staged.name, from: staged.place, to: wanted, in: targetPlace))
                kept.insert(staged)
                repaired = true
                return true
            }
            // Prefer a copy in a state folder (furthest first), then a staged one in tmp/.
            let candidates = files.filter { $0.name.kind == kind }.sorted {
                ($0.location?.progressRank ?? -1) > ($1.location?.progressRank ?? -1)
            }
            guard let source = candidates.first else { return false }
            plan.repairs.append(.moveFile(source.name, from: source.place, to: wanted, in: targetPlace))
            kept.insert(source)
            repaired = true
            return true
        }

        let haveBlob = gather(.blob, as: blobAtTarget)
        let haveJSON = gather(.json, as: jsonAtTarget)
        for f in files where !kept.contains(f) {
            plan.repairs.append(.removeFile(f.name, in: f.place))
            repaired = true
        }

        switch (haveJSON, haveBlob) {
        case (true, true):
            plan.items[id] = target
            if repaired { plan.notes.append("\(id): completed an interrupted move; the item is in \(target)") }
        case (false, true):
            plan.repairs.append(.recreateMetadata(id, at: target))
            plan.items[id] = target
            plan.notes.append(
                target.state == .inflight && target.attempt == 1
                    ? "\(id): metadata was missing (a direct upload cut short, or a lost json); recreated it in \(target)"
                    : "\(id): metadata was missing; recreated it in \(target) (original name unknown)")
        case (true, false) where target.state == .failed:
            plan.items[id] = target  // already parked; `spoold show` tells the operator
        case (true, false):
            let failed = ItemLocation(.failed, attempt: target.attempt)
            plan.repairs.append(.quarantineMissingBlob(id, from: target, to: failed))
            plan.notes.append("\(id): its payload (.blob) is missing; moved the metadata to \(failed)")
        case (false, false):
            break  // unreachable: every id has at least one file
        }
    }
}
