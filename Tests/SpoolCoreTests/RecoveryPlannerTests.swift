import SpoolCore
import XCTest

final class RecoveryPlannerTests: XCTestCase {
    typealias File = RecoveryPlanner.FoundFile
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-photo.jpg")!
    let other = ItemID("20261121T141003124Z-0000-9f3ab2c1-other.bin")!

    private func json(_ place: SpoolPlace, _ attempt: Int, _ id: ItemID? = nil) -> File {
        File(place, ItemFileName(id: id ?? self.id, attempt: attempt, kind: .json))
    }
    private func blob(_ place: SpoolPlace, _ attempt: Int, _ id: ItemID? = nil) -> File {
        File(place, ItemFileName(id: id ?? self.id, attempt: attempt, kind: .blob))
    }
    private func pair(_ state: ItemState, _ attempt: Int, _ id: ItemID? = nil) -> [File] {
        [blob(.state(state), attempt, id), json(.state(state), attempt, id)]
    }
    private func unordered(_ repairs: [RecoveryPlan.Repair]) -> [String] { repairs.map { "\($0)" }.sorted() }
    private func loc(_ state: ItemState, _ attempt: Int) -> ItemLocation { ItemLocation(state, attempt: attempt) }

    /// Plans, checks the plan leaves each item as a whole pair in one place, and that planning again
    /// on the result changes nothing.
    @discardableResult
    private func planChecked(
        _ files: [File], _ last: [ItemID: IndexRecord] = [:], file: StaticString = #filePath, line: UInt = #line
    ) -> RecoveryPlan {
        let plan = RecoveryPlanner.plan(files: files, lastRecords: last)
        var sim = SimulatedSpool(files: Set(files), last: last)
        sim.apply(plan.repairs)
        let again = RecoveryPlanner.plan(files: Array(sim.files), lastRecords: sim.last)
        XCTAssertEqual(again.repairs, [], "not idempotent; first plan \(plan.repairs)", file: file, line: line)
        XCTAssertEqual(again.items, plan.afterRepairs, file: file, line: line)
        sim.assertConsistent(plan.items, file: file, line: line)
        return plan
    }

    func testConsistentPairs_needNoRepair() {
        let files = pair(.pending, 0) + pair(.failed, 3, other)
        let plan = planChecked(files)
        XCTAssertEqual(plan.repairs, [])
        XCTAssertEqual(plan.items, [id: loc(.pending, 0), other: loc(.failed, 3)])
        XCTAssertEqual(plan.notes, [])
    }

    func testInflightPair_isReportedInflight_forTheEngineToRequeue() {
        let plan = planChecked(pair(.inflight, 2))
        XCTAssertEqual(plan.repairs, [])
        XCTAssertEqual(plan.items, [id: loc(.inflight, 2)])
    }

    func testClaimSplit_withoutIndex_completesToTheFurthestState() {
        // Claim renames the blob first: blob in inflight.a1, json still in pending.a0.
        let plan = planChecked([blob(.state(.inflight), 1), json(.state(.pending), 0)])
        XCTAssertEqual(plan.repairs, [.moveFile(ItemFileName(id: id, attempt: 0, kind: .json), from: .state(.pending),
                                                to: ItemFileName(id: id, attempt: 1, kind: .json), in: .state(.inflight))])
        XCTAssertEqual(plan.items, [id: loc(.inflight, 1)])
        XCTAssertEqual(plan.notes.count, 1)
    }

    func testClaimSplit_withIndexIntent_completesTheClaim() {
        let last = [id: IndexRecord(.claim, id, from: loc(.pending, 0), to: loc(.inflight, 1))]
        let plan = planChecked([blob(.state(.inflight), 1), json(.state(.pending), 0)], last)
        XCTAssertEqual(plan.items, [id: loc(.inflight, 1)])
    }

    func testHandBackSplit_withIndexIntent_followsTheIntentNotTheFurthest() {
        // inflight.a1 → pending.a0 (an outage hands the attempt back): blob already in pending.a0.
        let files = [blob(.state(.pending), 0), json(.state(.inflight), 1)]
        let last = [id: IndexRecord(.requeue, id, from: loc(.inflight, 1), to: loc(.pending, 0))]
        XCTAssertEqual(planChecked(files, last).items, [id: loc(.pending, 0)])
        // Without the index the furthest state wins (the attempt stays counted: safe).
        XCTAssertEqual(planChecked(files).items, [id: loc(.inflight, 1)])
    }

    func testRequeueSplit_withoutIndex_goesToPending() {
        let plan = planChecked([blob(.state(.pending), 1), json(.state(.inflight), 1)])
        XCTAssertEqual(plan.items, [id: loc(.pending, 1)])
    }

    func testIntentRecordedButNothingMoved_andNoFileAtEitherEnd_fallsBackToFurthest() {
        let last = [id: IndexRecord(.claim, id, from: loc(.pending, 5), to: loc(.inflight, 6))]
        XCTAssertEqual(planChecked(pair(.pending, 1), last).items, [id: loc(.pending, 1)])
    }

    func testJsonInTmp_blobInPending_completesTheAdd() {
        let last = [id: IndexRecord(.add, id, from: nil, to: loc(.pending, 0))]
        for records in [last, [:]] {
            let plan = planChecked([json(.tmp, 0), blob(.state(.pending), 0)], records)
            XCTAssertEqual(plan.repairs, [.moveFile(ItemFileName(id: id, attempt: 0, kind: .json), from: .tmp,
                                                    to: ItemFileName(id: id, attempt: 0, kind: .json), in: .state(.pending))])
            XCTAssertEqual(plan.items, [id: loc(.pending, 0)])
        }
    }

    func testTmpOnlyOrphans_areRemoved() {
        let files = [json(.tmp, 0), blob(.tmp, 0), json(.tmp, 1, other)]
        let plan = planChecked(files, [id: IndexRecord(.add, id, from: nil, to: loc(.pending, 0))])
        XCTAssertEqual(unordered(plan.repairs), unordered(files.map { RecoveryPlan.Repair.removeFile($0.name, in: .tmp) }))
        XCTAssertEqual(plan.items, [:])
    }

    func testLoneBlob_getsItsMetadataRecreated() {
        let plan = planChecked([blob(.state(.pending), 2)])
        XCTAssertEqual(plan.repairs, [.recreateMetadata(id, at: loc(.pending, 2))])
        XCTAssertEqual(plan.items, [id: loc(.pending, 2)])
    }

    func testLoneJson_isQuarantinedToFailed() {
        let plan = planChecked([json(.state(.pending), 1)])
        XCTAssertEqual(plan.repairs, [.quarantineMissingBlob(id, from: loc(.pending, 1), to: loc(.failed, 1))])
        XCTAssertEqual(plan.items[id], nil)
        XCTAssertTrue(plan.notes.first?.contains("missing") == true)
    }

    func testLoneJsonAlreadyInFailed_isKeptWithoutRepair() {
        let plan = planChecked([json(.state(.failed), 3)])
        XCTAssertEqual(plan.repairs, [])
        XCTAssertEqual(plan.items, [id: loc(.failed, 3)])
    }

    func testSameIDCompleteInTwoFolders_keepsTheFurthest() {
        let plan = planChecked(pair(.pending, 1) + pair(.inflight, 1))
        XCTAssertEqual(plan.items, [id: loc(.pending, 1)])
        XCTAssertEqual(unordered(plan.repairs), unordered([
            .removeFile(ItemFileName(id: id, attempt: 1, kind: .json), in: .state(.inflight)),
            .removeFile(ItemFileName(id: id, attempt: 1, kind: .blob), in: .state(.inflight)),
        ]))
        XCTAssertEqual(planChecked(pair(.pending, 0) + pair(.failed, 3)).items, [id: loc(.failed, 3)])
        XCTAssertEqual(planChecked(pair(.failed, 2) + pair(.done, 2)).items, [id: loc(.done, 2)])
    }

    func testDoneOrPurgeRecorded_removesEveryFile() {
        let files = [json(.state(.inflight), 1), blob(.state(.inflight), 1), json(.tmp, 1), blob(.state(.pending), 0)]
        for op in [IndexRecord.Operation.done, .purge] {
            let plan = planChecked(files, [id: IndexRecord(op, id, from: loc(.inflight, 1), to: nil)])
            XCTAssertEqual(unordered(plan.repairs), unordered(files.map { RecoveryPlan.Repair.removeFile($0.name, in: $0.place) }), "\(op)")
            XCTAssertEqual(plan.items, [:])
        }
    }

    func testDoneWithKeepDone_isKeptInDone() {
        let last = [id: IndexRecord(.done, id, from: loc(.inflight, 1), to: loc(.done, 1))]
        XCTAssertEqual(planChecked([blob(.state(.done), 1), json(.state(.inflight), 1)], last).items, [id: loc(.done, 1)])
    }

    func testOperatorMovedAParkedItemBackToPending_isAdopted() throws {
        // The engine parks an unreadable item from pending/ (`fail pending.a0 → failed.a0`); the
        // operator fixes it and runs `mv failed/* pending/` before the next start (items moved by hand are adopted).
        let last = [id: IndexRecord(.fail, id, from: loc(.pending, 0), to: loc(.failed, 0))]
        let plan = RecoveryPlanner.plan(files: pair(.pending, 0), lastRecords: last)
        XCTAssertEqual(plan.items[id], loc(.pending, 0), "a hand-moved item (complete pair at `from`, nothing at `to`) is adopted where it is")
        XCTAssertEqual(plan.repairs, [])
    }

    func testProgressRank_isDistinctPerLocation() throws {
        var seen: [Int: ItemLocation] = [:]
        var clashes: [String] = []
        for attempt in 0...20 {
            for state in ItemState.allCases {
                let l = ItemLocation(state, attempt: attempt)
                if let other = seen[l.progressRank] { clashes.append("\(other) and \(l) both rank \(l.progressRank)") }
                seen[l.progressRank] = l
            }
        }
        XCTAssertLessThan(ItemLocation(.pending, attempt: 0).progressRank, ItemLocation(.inflight, attempt: 1).progressRank)
        XCTAssertLessThan(ItemLocation(.inflight, attempt: 1).progressRank, ItemLocation(.pending, attempt: 1).progressRank)
        XCTAssertLessThan(ItemLocation(.pending, attempt: 3).progressRank, ItemLocation(.failed, attempt: 3).progressRank)
        XCTAssertLessThan(ItemLocation(.failed, attempt: 3).progressRank, ItemLocation(.done, attempt: 3).progressRank)
        XCTAssertEqual(clashes, [], "progressRank must not tie, or recovery's target would depend on Set order")
    }

    private func hasRankTie(_ files: Set<File>) -> Bool {
        Dictionary(grouping: files, by: \.name.id).values.contains { group in
            let locations = Set(group.compactMap { f -> ItemLocation? in
                guard case .state(let s) = f.place else { return nil }
                return ItemLocation(s, attempt: f.name.attempt)
            })
            return Set(locations.map(\.progressRank)).count != locations.count
        }
    }

    func testRandomSpools_planIsIdempotent_andLosesNothing() {
        var rng = SplitMix64(seed: 2026)
        let ids = (0..<4).map { ItemID("20261121T14100312\($0)Z-0000-9f3ab2c1")! }
        let places: [SpoolPlace] = [.state(.pending), .state(.inflight), .state(.failed), .state(.done), .tmp]
        let ops = IndexRecord.Operation.allCases
        func randomLocation() -> ItemLocation {
            ItemLocation(ItemState.allCases[Int(rng.next() % 4)], attempt: Int(rng.next() % 3))
        }
        var mismatches: [String] = []
        for round in 0..<3000 {
            var files = Set<File>()
            var last: [ItemID: IndexRecord] = [:]
            for id in ids {
                for _ in 0..<Int(rng.next() % 4) {
                    files.insert(File(places[Int(rng.next() % 5)], ItemFileName(id: id, attempt: Int(rng.next() % 3),
                                                                                kind: rng.next() % 2 == 0 ? .json : .blob)))
                }
                if rng.next() % 3 != 0 {
                    let op = ops[Int(rng.next() % UInt64(ops.count))]
                    let from: ItemLocation? = op == .add || op == .live ? nil : randomLocation()
                    let to: ItemLocation? = (op == .done || op == .purge) && rng.next() % 2 == 0 ? nil : randomLocation()
                    last[id] = IndexRecord(op, id, from: from, to: to)
                }
            }
            // Rank ties (done.aN against inflight.a(N+1)) are covered by testProgressRank_isDistinctPerLocation.
            if hasRankTie(files) { continue }
            let plan = RecoveryPlanner.plan(files: Array(files), lastRecords: last)
            var sim = SimulatedSpool(files: files, last: last)
            sim.apply(plan.repairs)
            let again = RecoveryPlanner.plan(files: Array(sim.files), lastRecords: sim.last)
            if again.repairs != [] || again.items != plan.afterRepairs {
                mismatches.append("round \(round): files \(files.map { "\($0.place)/\($0.name)" }.sorted()) last \(last.values.map(\.description).sorted()) → second plan \(again.repairs)")
            }
            sim.assertConsistent(plan.items)
            // Nothing lost: an item with a blob in a state folder survives unless success or purge was recorded.
            for id in ids where files.contains(where: { $0.name.id == id && $0.name.kind == .blob && $0.place != .tmp }) {
                let finished = last[id].map { $0.to == nil && ($0.operation == .done || $0.operation == .purge) } ?? false
                if !finished { XCTAssertNotNil(plan.items[id], "round \(round): \(id) lost") }
            }
            // A crash part-way through the repairs, then a full recovery, ends in the same place.
            if !plan.repairs.isEmpty {
                var crashed = SimulatedSpool(files: files, last: last)
                crashed.apply(Array(plan.repairs.prefix(Int(rng.next() % UInt64(plan.repairs.count)))))
                let resumed = RecoveryPlanner.plan(files: Array(crashed.files), lastRecords: crashed.last)
                crashed.apply(resumed.repairs)
                XCTAssertEqual(resumed.afterRepairs, plan.afterRepairs,
                               "round \(round): files \(files.map { "\($0.place)/\($0.name)" }.sorted()) last \(last.values.map(\.description).sorted()) plan \(plan.repairs) resumed \(resumed.repairs)")
                XCTAssertEqual(crashed.files, sim.files, "round \(round)")
            }
        }
        XCTAssertEqual(mismatches.count, 0, mismatches.prefix(5).joined(separator: "\n"))
    }
}

extension RecoveryPlan {
    /// Where every item is once the repairs are done, quarantined ones included.
    var afterRepairs: [ItemID: ItemLocation] {
        var all = items
        for case .quarantineMissingBlob(let id, _, let to) in repairs { all[id] = to }
        return all
    }
}

/// Files of a spool as a set, changed the way spoold's recovery performs each repair
/// (`Spool.perform` in `SpoolStore/Spool+Recovery.swift`: a quarantine also appends a `fail` record to the index).
struct SimulatedSpool {
    var files: Set<RecoveryPlanner.FoundFile>
    var last: [ItemID: IndexRecord]

    mutating func apply(_ repairs: [RecoveryPlan.Repair]) {
        for repair in repairs {
            switch repair {
            case .moveFile(let name, let from, let to, let place):
                precondition(files.remove(.init(from, name)) != nil, "move of a missing file \(from)/\(name)")
                files.insert(.init(place, to))
            case .removeFile(let name, let place):
                files.remove(.init(place, name))
            case .recreateMetadata(let id, let location):
                files.insert(.init(.state(location.state), ItemFileName(id: id, attempt: location.attempt, kind: .json)))
            case .quarantineMissingBlob(let id, let from, let to):
                last[id] = IndexRecord(.fail, id, from: from, to: to)
                files.remove(.init(.state(from.state), ItemFileName(id: id, attempt: from.attempt, kind: .json)))
                files.insert(.init(.state(to.state), ItemFileName(id: id, attempt: to.attempt, kind: .json)))
            }
        }
    }

    /// Each planned item is one whole pair at its location (or a lone json in failed/), with no other file.
    func assertConsistent(_ items: [ItemID: ItemLocation], file: StaticString = #filePath, line: UInt = #line) {
        for (id, location) in items {
            let mine = files.filter { $0.name.id == id }
            let place = SpoolPlace.state(location.state)
            var expected: Set<RecoveryPlanner.FoundFile> = [.init(place, ItemFileName(id: id, attempt: location.attempt, kind: .json))]
            let blob = RecoveryPlanner.FoundFile(place, ItemFileName(id: id, attempt: location.attempt, kind: .blob))
            if location.state != .failed || mine.contains(blob) { expected.insert(blob) }
            XCTAssertEqual(mine, expected, "\(id) at \(location)", file: file, line: line)
        }
    }
}

/// Claims and recorded successes are completed from the index alone (they skip folder fsyncs).
final class RecoveryPlannerIndexDurabilityTests: XCTestCase {
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-photo.jpg")!

    private func pair(_ state: ItemState, _ attempt: Int) -> [RecoveryPlanner.FoundFile] {
        [.init(.state(state), ItemFileName(id: id, attempt: attempt, kind: .json)),
         .init(.state(state), ItemFileName(id: id, attempt: attempt, kind: .blob))]
    }

    func testClaimWhoseRenamesWereLost_isCompleted_soTheAttemptStaysCounted() {
        let last = [id: IndexRecord(.claim, id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1))]
        XCTAssertEqual(RecoveryPlanner.plan(files: pair(.pending, 0), lastRecords: last).items, [id: ItemLocation(.inflight, attempt: 1)])
    }

    func testKeptSuccessWhoseClaimAndDoneRenamesWereLost_isCompleted_neverUploadedAgain() {
        let last = [id: IndexRecord(.done, id, from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.done, attempt: 1))]
        XCTAssertEqual(RecoveryPlanner.plan(files: pair(.pending, 0), lastRecords: last).items, [id: ItemLocation(.done, attempt: 1)])
    }

    /// A power cut may keep a requeue's (or a failure's) synced record but neither the claim's
    /// renames before it (they need no folder fsync) nor its own: the files are still where the
    /// claim found them. The claim was durable, so the item is where it put it (and recovery
    /// counts the attempt as interrupted), never back at the attempt before.
    func testRequeueRecordedOverAClaimWhoseRenamesWereLost_keepsTheClaimedAttempt() {
        for op in [IndexRecord.Operation.requeue, .fail] {
            let to = ItemLocation(op == .fail ? .failed : .pending, attempt: 2)
            let last = [id: IndexRecord(op, id, from: ItemLocation(.inflight, attempt: 2), to: to)]
            let files = pair(.pending, 1) + [.init(.tmp, ItemFileName(id: id, attempt: 2, kind: .json))]
            XCTAssertEqual(RecoveryPlanner.plan(files: files, lastRecords: last).items, [id: ItemLocation(.inflight, attempt: 2)], "\(op)")
        }
        // A hand-back's target is where the files are: nothing lags.
        let handBack = [id: IndexRecord(.requeue, id, from: ItemLocation(.inflight, attempt: 2), to: ItemLocation(.pending, attempt: 1))]
        XCTAssertEqual(RecoveryPlanner.plan(files: pair(.pending, 1), lastRecords: handBack).items, [id: ItemLocation(.pending, attempt: 1)])
    }

    func testParkingThatNeverStarted_isUndone_soAnOperatorsMoveBackIsAdopted() {
        let last = [id: IndexRecord(.fail, id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.failed, attempt: 0))]
        XCTAssertEqual(RecoveryPlanner.plan(files: pair(.pending, 0), lastRecords: last).items, [id: ItemLocation(.pending, attempt: 0)])
    }
}
