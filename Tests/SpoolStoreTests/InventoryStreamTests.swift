import Glibc
import SpoolCore
import SpoolStore
import SpoolTestSupport
import XCTest

/// The inspection commands at any size (`ls`, `show`, `retry --all`, `purge --failed`): items are
/// handed over a batch at a time as the folder is read, so memory holds a batch and the first
/// one comes before the folder has been read through.
final class InventoryStreamTests: StoreTestCase {
    /// The spool on a tmpfs when there is one with room: 40,000 files took 2-12 s to write and
    /// remove on a disk others wrote to, and nothing here depends on the file system.
    override func setUpWithError() throws {
        temp = try TemporarySpool(in: TemporarySpool.memoryFolder(withRoomFor: 1 << 30))
        spool = try temp.open()
    }

    private func writeItems(_ count: Int, in folder: SpoolFolder = .pending) throws -> [ItemID] {
        var maker = TestItems()
        var ids: [ItemID] = []
        for n in 0..<count {
            let metadata = maker.metadata("f\(n).dat")
            try temp.writeItem(metadata, payload: [1], in: folder)
            ids.append(try XCTUnwrap(ItemID(metadata.id)))
        }
        return ids
    }

    func testTwentyThousandItems_comeInBatchesOfAThousand_theFirstBeforeTheFolderIsRead() throws {
        let ids = try writeItems(20_000)
        let fs = RecordingFileSystem()
        let recorded = try temp.open(fs: fs)
        var seen = Set<ItemID>()
        var batches = 0
        var readAtFirst: Int?
        try SpoolInventory.forEachBatch(recorded, states: [.pending, .failed]) { batch in
            if readAtFirst == nil { readAtFirst = fs.entriesRead }
            batches += 1
            XCTAssertLessThanOrEqual(batch.count, 1000, "a batch at most")
            XCTAssertEqual(batch.map(\.id), batch.map(\.id).sorted(), "sorted within the batch")
            for item in batch {
                XCTAssertTrue(seen.insert(item.id).inserted, "each item once")
                XCTAssertTrue(item.hasJSON)
                XCTAssertEqual(item.blobSize, 1)
            }
        }
        XCTAssertEqual(seen, Set(ids))
        XCTAssertEqual(batches, 20)
        XCTAssertLessThan(try XCTUnwrap(readAtFirst), 40_000 / 2, "the first batch came while the folder was being read")
    }

    /// A lone blob is an item (a direct upload, or damage); a json's blob is not one of its own;
    /// `wanted` picks items by their id's bytes.
    func testLoneBlobs_andWantedIDs() throws {
        let ids = try writeItems(5)
        XCTAssertEqual(unlink(temp.path(.pending, "\(ids[1]).a0.json")), 0)
        var found: [SpoolInventory.Item] = []
        try SpoolInventory.forEachBatch(spool, states: [.pending]) { found += $0 }
        XCTAssertEqual(found.map(\.id), ids)
        XCTAssertEqual(found.map(\.hasJSON), [true, false, true, true, true])
        let wanted = ids[3].rawValue
        var picked: [SpoolInventory.Item] = []
        try SpoolInventory.forEachBatch(spool, wanted: { $0.elementsEqual(wanted.utf8) }) { picked += $0 }
        XCTAssertEqual(picked.map(\.id), [ids[3]])
    }
}
