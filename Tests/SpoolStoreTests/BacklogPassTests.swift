import Glibc
import SpoolCore
@testable import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A pass over pending/ for the queue beyond memory: every item json not in memory, in line
/// order (untried by the time in their id, tried by their json's mtime), read back from sorted
/// runs in tmp/ whatever the chunk size.
final class BacklogPassTests: StoreTestCase {
    private func addItems(_ count: Int) throws -> [ItemID] {
        var batch: [NewItem] = []
        for n in 0..<count {
            let name = "f\(n).dat"
            try temp.write(Array(name.utf8), to: name, in: .incoming)
            batch.append(items.incoming(name))
        }
        _ = try spool.add(batch)
        return batch.map(\.id)
    }

    private func readAll(_ runs: BacklogRuns) throws -> [BacklogEntry] {
        var reader = try runs.open()
        defer { reader.close() }
        var out: [BacklogEntry] = []
        while let e = try reader.next() { out.append(e) }
        return out
    }

    func testPass_readsEveryItemInLineOrder_acrossChunks_andSkipsThoseInMemory() throws {
        let ids = try addItems(25)
        let runs = try spool.backlogPass.run(excluding: [ids[3], ids[7]], pass: 1, chunkSize: 4)
        defer { runs.remove() }
        XCTAssertEqual(runs.names.count, 6, "23 entries in chunks of 4")
        XCTAssertTrue(runs.names.allSatisfy { temp.names(in: .tmp).contains($0) })
        let read = try readAll(runs)
        XCTAssertEqual(read.map(\.id), ids.filter { $0 != ids[3] && $0 != ids[7] }, "oldest first")
        XCTAssertEqual(read.map(\.attempt), Array(repeating: 0, count: 23))
        XCTAssertEqual(runs.tally.jsonsSeen, 25)
        XCTAssertEqual(runs.tally.blobsSeen, 25)

        runs.remove()
        XCTAssertEqual(temp.names(in: .tmp).filter { $0.hasPrefix("backlog.") }, [])
    }

    /// A recycle hands the runs on open (`BacklogReader.handOver`), each at the entry the merge
    /// held: read on from there, they give exactly the rest of the line, across the 64 KiB pieces
    /// a run is read in. A descriptor that is not an open run linked nowhere is refused.
    func testRunsHandedOn_readOnExactlyWhereTheyWere() throws {
        let ids = try addItems(3_000)
        let runs = try spool.backlogPass.run(excluding: [], pass: 1, chunkSize: 1_500)
        XCTAssertEqual(runs.names.count, 2)
        XCTAssertGreaterThan(try spool.fs.status(of: runs.names[0], in: spool.descriptor(.tmp)).size, 65_536, "longer than one piece")
        var reader = try runs.open()
        var read: [ItemID] = []
        for _ in 0..<1_700 { read.append(try XCTUnwrap(reader.next()).id) }
        XCTAssertThrowsError(try spool.resumeRuns([RecycleLine.Run(descriptor: 0, offset: 0)]), "not a run file")
        let handed = reader.handOver()
        XCTAssertEqual(handed.count, 2)
        XCTAssertThrowsError(try spool.resumeRuns(handed), "still linked in tmp/: not handed on by a recycle")
        runs.remove()
        var resumed = try spool.resumeRuns(handed)
        defer { resumed.close() }
        while let entry = try resumed.next() { read.append(entry.id) }
        XCTAssertEqual(read, ids, "each entry once, in line")
    }

    func testHead_isTheFirstItemsInLine_readWithoutWritingRuns_andTalliesAsAPassDoes() throws {
        let ids = try addItems(40)
        // The first item was tried and is due again when the tenth was made: it stands just
        // before it (the same time; its id is earlier).
        let first = ids[0]
        XCTAssertEqual(rename(temp.path(.pending, "\(first).a0.json"), temp.path(.pending, "\(first).a1.json")), 0)
        XCTAssertEqual(rename(temp.path(.pending, "\(first).a0.blob"), temp.path(.pending, "\(first).a1.blob")), 0)
        let due = ids[9].createdAt!
        try spool.setModificationTime("\(first).a1.json", in: .pending, to: due)

        let head = try spool.backlogPass.head(limit: 12, excluding: [ids[3]], watching: [ids[5], ids[0]])
        XCTAssertEqual(head.entries.map(\.id), Array(ids[1...8].filter { $0 != ids[3] }) + [first] + Array(ids[9...12]))
        XCTAssertEqual(head.entries[7], BacklogEntry(notBefore: due, id: first, attempt: 1))
        XCTAssertEqual(head.entries, head.entries.sorted(), "in line order")
        XCTAssertEqual(head.tally.queued, 39, "every item but the excluded")
        XCTAssertFalse(head.isWhole)
        XCTAssertEqual(head.tally.jsonsSeen, 40)
        XCTAssertTrue(head.tally.pairsMatch)
        XCTAssertEqual(head.tally.watchedSeen, [ids[5], ids[0]])
        XCTAssertEqual(temp.names(in: .tmp).filter { $0.hasPrefix("backlog.") }, [], "no runs written")

        let all = try spool.backlogPass.head(limit: 100, excluding: [])
        XCTAssertTrue(all.isWhole)
        XCTAssertEqual(all.entries.count, 40)
        let runs = try spool.backlogPass.run(excluding: [], pass: 1, chunkSize: 7)
        defer { runs.remove() }
        XCTAssertEqual(try readAll(runs), all.entries, "the same line as the runs")
    }

    func testATriedItem_standsInLineAtItsNextAttemptTime() throws {
        let ids = try addItems(3)
        // The first item was tried and is due again after the others were made.
        let first = ids[0]
        XCTAssertEqual(rename(temp.path(.pending, "\(first).a0.json"), temp.path(.pending, "\(first).a1.json")), 0)
        XCTAssertEqual(rename(temp.path(.pending, "\(first).a0.blob"), temp.path(.pending, "\(first).a1.blob")), 0)
        let later = ids[2].createdAt!.adding(seconds: 60)
        try spool.setModificationTime("\(first).a1.json", in: .pending, to: later)

        let runs = try spool.backlogPass.run(excluding: [], pass: 1)
        defer { runs.remove() }
        let read = try readAll(runs)
        XCTAssertEqual(read.map(\.id), [ids[1], ids[2], first])
        XCTAssertEqual(read.last, BacklogEntry(notBefore: later, id: first, attempt: 1))
        XCTAssertEqual(read.last?.attempt, 1)
    }

    func testNamesThatAreNotItems_areIgnored() throws {
        _ = try addItems(2)
        try temp.write([1], to: "stray.txt", in: .pending)
        try temp.write([1], to: "20261121T141003123Z-x.a01.json", in: .pending)
        let runs = try spool.backlogPass.run(excluding: [], pass: 1)
        defer { runs.remove() }
        XCTAssertEqual(try readAll(runs).count, 2)
    }

    func testLoneFilesAndOddEntries_areNoticed_forARepair() throws {
        let ids = try addItems(3)
        let healthy = try spool.backlogPass.run(excluding: [], pass: 1)
        healthy.remove()
        XCTAssertFalse(healthy.tally.needsRepair)

        XCTAssertEqual(unlink(temp.path(.pending, "\(ids[1]).a0.json")), 0)  // a lone blob
        let lone = try spool.backlogPass.run(excluding: [], pass: 2)
        lone.remove()
        XCTAssertTrue(lone.tally.needsRepair)
        XCTAssertFalse(lone.tally.pairsMatch)

        XCTAssertEqual(unlink(temp.path(.pending, "\(ids[1]).a0.blob")), 0)
        XCTAssertEqual(mkdir(temp.path(.pending, "\(ids[1]).a0.json"), 0o700), 0)
        XCTAssertEqual(mkdir(temp.path(.pending, "\(ids[1]).a0.blob"), 0o700), 0)
        let odd = try spool.backlogPass.run(excluding: [], pass: 3)
        odd.remove()
        XCTAssertTrue(odd.tally.pairsMatch, "named in pairs")
        XCTAssertEqual(odd.tally.oddEntries, 2)
        XCTAssertTrue(odd.tally.needsRepair)
    }
    /// A start's head of a pending/ large enough to be listed on several threads at once
    /// (`SplitListing`) is the one a listing of the whole folder finds: each part keeps its own
    /// earliest entries, and the merge keeps the earliest of them; the tallies add up.
    func testHead_ofAFolderListedInParts_isTheWholeFoldersHead() throws {
        var maker = TestItems()
        var ids: [ItemID] = []
        for n in 0..<3_000 {
            let metadata = maker.metadata("f\(n).dat")
            try temp.writeItem(metadata, payload: [1])
            ids.append(try XCTUnwrap(ItemID(metadata.id)))
        }
        // A tried item due before all of them.
        let tried = maker.metadata("tried.dat")
        try temp.writeItem(tried, payload: [1], attempt: 2, mtime: Timestamp(millisecondsSinceEpoch: 1_000))
        let whole = try spool.backlogPass.head(limit: 200, excluding: [ids[5]], watching: [ids[2_999], ids[0]], parts: 1)
        let split = try spool.backlogPass.head(limit: 200, excluding: [ids[5]], watching: [ids[2_999], ids[0]], parts: 3)
        XCTAssertEqual(split.entries, whole.entries)
        XCTAssertEqual(split.entries.first?.id.rawValue, tried.id)
        XCTAssertEqual(split.entries.dropFirst().map(\.id), Array(ids.prefix(200).filter { $0 != ids[5] }.prefix(199)))
        XCTAssertEqual(split.tally.queued, 3_000)
        XCTAssertEqual(split.tally.jsonsSeen, 3_001)
        XCTAssertEqual(split.tally.blobsSeen, 3_001)
        XCTAssertTrue(split.tally.pairsMatch)
        XCTAssertEqual(split.tally.watchedSeen, [ids[2_999], ids[0]])
        // A start's head asks for its parts: one listing of pending/ a core (at most four) where
        // the folder is listed in hash order.
        let fs = RecordingFileSystem()
        let recorded = try temp.open(fs: fs)
        let head = try recorded.backlogPass.head(limit: 200, excluding: [ids[5]])
        XCTAssertEqual(head.entries, split.entries)
        let pending = Glibc.open(temp.path(.pending, "."), O_RDONLY | O_DIRECTORY)
        defer { _ = Glibc.close(pending) }
        let inHashOrder = PosixFileSystem().listsInHashOrder(FileDescriptor(rawValue: pending))
        XCTAssertEqual(fs.calls(.list).filter { $0.name == "pending" }.count, inHashOrder ? SplitListing.partsForThisMachine : 1)
    }

    /// A pass asked for a census (`PassCensus`: a start's count of what its queue takes) counts
    /// pending/ as `FolderReading.census` does, with its own exclusions, from the pass's one
    /// listing: items, bytes (every file, or a sample), creation minutes, oldest, next due.
    func testRun_withACensus_countsAsAFolderCensusDoes_inTheSameListing() throws {
        var maker = TestItems()
        var ids: [ItemID] = []
        for n in 0..<600 {
            let metadata = maker.metadata("f\(n).dat")
            try temp.writeItem(metadata, payload: [UInt8](repeating: 1, count: n % 7))
            ids.append(try XCTUnwrap(ItemID(metadata.id)))
        }
        let tried = maker.metadata("tried.dat")
        try temp.writeItem(tried, payload: [1, 2], attempt: 2, mtime: Timestamp(millisecondsSinceEpoch: 1_000))
        try temp.write([1], to: "notes.txt", in: .pending)
        for measure in [FolderCensus.Measure.all, .sample(budget: 100)] {
            let expected = try spool.reading(.pending).census(measure: measure, excluding: [ids[0], ids[9]], keepsCreationMinutes: true)
            let fs = RecordingFileSystem()
            let recorded = try temp.open(fs: fs)
            let runs = try recorded.backlogPass.run(
                excluding: [ids[3]], pass: 1, census: PassCensus(excluding: [ids[0], ids[9]], measure: measure, keepsCreationMinutes: true))
            defer { runs.remove() }
            let census = try XCTUnwrap(runs.census)
            XCTAssertEqual(census.items, 599, "600 items and the tried one, less the two left out")
            XCTAssertEqual(census.items, expected.items)
            XCTAssertEqual(census.usage, expected.usage, "\(measure)")
            XCTAssertEqual(census.isEstimated, expected.isEstimated)
            XCTAssertEqual(census.isEstimated, measure != .all)
            XCTAssertEqual(census.ages.total, 599)
            XCTAssertEqual(census.ages, expected.ages)
            XCTAssertEqual(census.oldest, expected.oldest)
            XCTAssertEqual(census.nextDue, Timestamp(millisecondsSinceEpoch: 1_000), "the tried item, due at its json's mtime")
            XCTAssertEqual(census.strayCount, 1)
            XCTAssertEqual(runs.count, 600, "the runs keep their own exclusions")
            XCTAssertEqual(fs.calls(.list).filter { $0.name == "pending" }.count, 1, "one listing for both")
        }
        let plain = try spool.backlogPass.run(excluding: [], pass: 2)
        defer { plain.remove() }
        XCTAssertNil(plain.census, "counted only when asked")
    }
}
