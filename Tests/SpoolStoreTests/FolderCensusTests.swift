import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A state folder read name by name for `spoold status` and the daemon's count of its queue:
/// counts, ages and the oldest from the names; bytes from a stat of both files of each item, or,
/// past a budget, of a sample whose sums are scaled up.
final class FolderCensusTests: StoreTestCase {
    private let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    /// `count` items one second apart, the newest 60.5 s old, payloads of 1 to 200 bytes.
    private func writeItems(_ count: Int, in folder: SpoolFolder = .pending) throws -> [ItemID] {
        var generator = ItemIDGenerator(processTag: 0x5eed)
        var ids: [ItemID] = []
        for n in 0..<count {
            let at = now.adding(seconds: -60.5 - Double(count - 1 - n))
            let id = generator.next(at: at, originalName: "f\(n).dat")
            let metadata = ItemMetadata(id: id, originalName: "f\(n).dat", size: Int64(n % 200 + 1), contentType: "application/octet-stream", createdAt: at)
            try temp.writeItem(metadata, payload: [UInt8](repeating: 1, count: n % 200 + 1), in: folder)
            ids.append(id)
        }
        return ids
    }

    private func truth(_ folder: SpoolFolder) -> (payload: Int64, disk: Int64) {
        var payload: Int64 = 0, disk: Int64 = 0
        for name in temp.names(in: folder) where ItemFileName(parsing: name) != nil {
            var status = stat()
            XCTAssertEqual(stat(temp.path(folder, name), &status), 0)
            disk += Int64(status.st_blocks) * 512
            if name.hasSuffix(".blob") { payload += Int64(status.st_size) }
        }
        return (payload, disk)
    }

    func testAll_countsEveryItemExactly_fromNamesAndTwoStatsEach() throws {
        let ids = try writeItems(300)
        _ = try temp.write([1], to: "notes.txt", in: .pending)
        let census = try spool.reading(.pending).census(measure: .all, now: now)
        XCTAssertEqual(census.items, 300)
        XCTAssertFalse(census.isEstimated)
        XCTAssertEqual(census.measuredItems, 300)
        let (payload, disk) = truth(.pending)
        XCTAssertEqual(census.usage.payloadBytes, payload)
        XCTAssertEqual(census.usage.diskBytes, disk, "both files' blocks")
        XCTAssertEqual(census.oldest, ids.first)
        XCTAssertEqual(census.nextDue, ids.first?.createdAt, "an untried item is due from its creation")
        XCTAssertEqual(census.shape.total, 300)
        XCTAssertEqual(census.shape.counts[QueueAgeShape.bucket(forAgeSeconds: 90)], 60, "1-2 min: the newest 60, by age from the id")
        XCTAssertEqual(census.strayCount, 1)
        XCTAssertEqual(census.strays, ["pending/notes.txt"])
    }

    /// Past the budget only a sample is stat'ed (a fixed share of the ids, halved as needed), and
    /// the sums are scaled up; the counts stay exact.
    func testSample_statsAtMostTheBudget_andEstimatesTheRest() throws {
        _ = try writeItems(2_500)
        let fs = RecordingFileSystem()
        let recorded = try temp.open(fs: fs)
        let census = try recorded.reading(.pending).census(measure: .sample(budget: 300), now: now)
        XCTAssertEqual(census.items, 2_500)
        XCTAssertTrue(census.isEstimated)
        XCTAssertLessThanOrEqual(census.measuredItems, 300)
        XCTAssertGreaterThan(census.measuredItems, 40)
        let stats = fs.calls(.fstatat).count
        XCTAssertLessThan(stats, 2_500, "fewer than one stat an item (both files of every item: 5,000)")
        let (payload, disk) = truth(.pending)
        XCTAssertEqual(Double(census.usage.payloadBytes), Double(payload), accuracy: Double(payload) * 0.25)
        XCTAssertEqual(Double(census.usage.diskBytes), Double(disk), accuracy: Double(disk) * 0.05, "every item takes 2 blocks here")
        XCTAssertEqual(census.shape.total, 2_500)
    }

    /// In inflight/ a blob without a json is a direct upload under way: an item; a tried pending
    /// item is due at its json's mtime; ids in memory are left out.
    func testLoneBlobInFlight_isAnItem_triedItemsAreDueAtTheirMtime_andExclusions() throws {
        var maker = TestItems(startingAt: now.millisecondsSinceEpoch - 600_000)
        let direct = maker.id("direct.bin")
        _ = try temp.write([1, 2, 3], to: ItemFileName(id: direct, attempt: 1, kind: .blob).description, in: .inflight)
        let inflight = try XCTUnwrap(SpoolSummary.load(spool, now: now, sampleBudget: nil).states[.inflight])
        XCTAssertEqual(inflight.count, 1)
        XCTAssertEqual(inflight.bytes, 3)
        XCTAssertEqual(inflight.oldest, direct)

        var tried = maker.metadata("tried.bin")
        tried.size = 1
        let due = now.adding(seconds: 3600)
        try temp.writeItem(tried, payload: [9], attempt: 2, mtime: due)
        var other = maker.metadata("other.bin")
        other.size = 1
        try temp.writeItem(other, payload: [9])
        let census = try spool.reading(.pending).census(now: now)
        XCTAssertEqual(census.nextDue, ItemID(other.id)?.createdAt, "the untried one comes first")
        let alone = try spool.reading(.pending).census(excluding: [try XCTUnwrap(ItemID(other.id))], now: now)
        XCTAssertEqual(alone.items, 1)
        XCTAssertEqual(alone.nextDue, due, "the tried one, at its next-attempt time")
    }
    /// A pending/ large enough to be listed on several threads at once (`SplitListing`) counts as
    /// when listed whole: the parts' counts, sums, oldest, next due time, ages and strays merge
    /// exactly, and a sample keeps within its budget over all the parts together.
    func testAFolderListedInParts_countsAsWhenListedWhole() throws {
        let ids = try writeItems(3_000)
        var maker = TestItems(startingAt: now.millisecondsSinceEpoch - 600_000)
        var tried = maker.metadata("tried.bin")
        tried.size = 1
        let due = now.adding(seconds: -86_400)
        try temp.writeItem(tried, payload: [9], attempt: 1, mtime: due)
        for name in ["notes.txt", "a.tmp", "README"] { _ = try temp.write([1], to: name, in: .pending) }
        let fd = Glibc.open(temp.path(.pending, "."), O_RDONLY | O_DIRECTORY)
        defer { _ = Glibc.close(fd) }
        if PosixFileSystem().listsInHashOrder(FileDescriptor(rawValue: fd)) {
            let states = try PosixFileSystem().forEachEntryInParts(FileDescriptor(rawValue: fd), parts: 3, start: { 0 }) { count, _, _ in count += 1 }
            XCTAssertEqual(states.count, 3, "6,000 names and more: listed in 3 parts")
            XCTAssertEqual(states.reduce(0, +), 6_005)
        }
        let whole = try spool.reading(.pending).census(measure: .all, now: now, keepsCreationMinutes: true, parts: 1)
        let split = try spool.reading(.pending).census(measure: .all, now: now, keepsCreationMinutes: true, parts: 3)
        XCTAssertEqual(whole.items, 3_001)
        XCTAssertEqual(split.items, whole.items)
        XCTAssertEqual(split.usage, whole.usage)
        XCTAssertFalse(split.isEstimated)
        XCTAssertEqual(split.oldest, ids.first)
        XCTAssertEqual(split.nextDue, due, "the tried item, due a day ago, whichever part listed it")
        XCTAssertEqual(split.shape, whole.shape)
        XCTAssertEqual(split.ages, whole.ages)
        XCTAssertEqual(split.strayCount, 3)
        XCTAssertEqual(Set(split.strays), ["pending/notes.txt", "pending/a.tmp", "pending/README"])

        // `spoold status` asks for its parts: one listing of pending/ a core (at most four) where
        // the folder is listed in hash order.
        let fs = RecordingFileSystem()
        let recorded = try temp.open(fs: fs)
        let summary = try SpoolSummary.load(recorded, now: now)
        XCTAssertEqual(summary.states[.pending]?.count, 3_001)
        let inHashOrder = PosixFileSystem().listsInHashOrder(FileDescriptor(rawValue: fd))
        XCTAssertEqual(fs.calls(.list).filter { $0.name == "pending" }.count, inHashOrder ? SplitListing.partsForThisMachine : 1)

        let sampled = try spool.reading(.pending).census(measure: .sample(budget: 300), now: now, parts: 3)
        XCTAssertEqual(sampled.items, 3_001)
        XCTAssertTrue(sampled.isEstimated)
        XCTAssertLessThanOrEqual(sampled.measuredItems, 300, "the budget is the whole folder's")
        XCTAssertEqual(Double(sampled.usage.diskBytes), Double(whole.usage.diskBytes), accuracy: Double(whole.usage.diskBytes) * 0.05)
    }
}
