import SpoolCore
import SpoolStore
import SpoolTestSupport
import XCTest

final class SpoolInventoryTests: XCTestCase {
    func testFindByIDOrUniquePrefix_andReportAmbiguity() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let spool = try temp.open()
        var items = TestItems()
        var batch: [NewItem] = []
        for name in ["alpha.txt", "beta.txt", "gamma.txt"] {
            try temp.write(Array(name.utf8), to: name, in: .incoming)
            batch.append(items.incoming(name))
        }
        _ = try spool.add(batch)
        try temp.write([1, 2], to: "waiting", in: .incoming)
        try temp.write([1], to: ".partial", in: .incoming)
        try temp.write([1], to: "stray.txt", in: .pending)

        let inventory = try SpoolInventory.load(spool)
        XCTAssertEqual(inventory.items.map(\.id), batch.map(\.id))
        XCTAssertEqual(inventory.strays, ["pending/stray.txt"])
        // The totals `spoold status` prints: dot-names in incoming/ are work in progress.
        let summary = try SpoolSummary.load(spool, now: Timestamp(millisecondsSinceEpoch: 1_795_000_000_000))
        XCTAssertEqual(summary.incomingFiles, 1)
        XCTAssertEqual(summary.incomingBytes, 2)
        XCTAssertEqual(summary.strays, ["pending/stray.txt"])
        XCTAssertEqual(summary.states[.pending]?.count, 3)
        XCTAssertEqual(summary.states[.pending]?.bytes, Int64("alpha.txtbeta.txtgamma.txt".utf8.count))
        XCTAssertEqual(summary.states[.pending]?.oldest, batch[0].id)
        let beta = batch[1].id.rawValue
        XCTAssertEqual(try inventory.find(beta).id, batch[1].id)
        XCTAssertEqual(try inventory.find(String(beta.prefix(19))).id, batch[1].id, "unique prefix")
        let found = try inventory.find(beta)
        XCTAssertEqual(found.location, ItemLocation(.pending, attempt: 0))
        XCTAssertTrue(found.hasJSON)
        XCTAssertEqual(found.blobSize, Int64("beta.txt".utf8.count))
        XCTAssertThrowsError(try inventory.find(String(beta.prefix(8)))) {
            XCTAssertEqual($0 as? SpoolError, .ambiguousItem(String(beta.prefix(8)), 3))
        }
        XCTAssertThrowsError(try inventory.find("1999")) { XCTAssertEqual($0 as? SpoolError, .noSuchItem("1999")) }
    }

    func testLoadOfWantedIDs_statsOnlyTheirFiles_andFindStillSeesAmbiguity() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        var items = TestItems()
        var batch: [NewItem] = []
        let setUp = try temp.open()
        for name in ["alpha.txt", "beta.txt", "gamma.txt"] {
            try temp.write(Array(name.utf8), to: name, in: .incoming)
            batch.append(items.incoming(name))
        }
        _ = try setUp.add(batch)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let beta = batch[1].id.rawValue
        let shared = String(beta.prefix(8))

        fs.resetLog()
        let one = try SpoolInventory.load(spool, wanted: SpoolInventory.matchingAny(of: [String(beta.prefix(19))]))
        XCTAssertEqual(one.items.map(\.id), [batch[1].id])
        XCTAssertEqual(fs.calls(.fstatat).map(\.name).sorted(), ["\(beta).a0.blob", "\(beta).a0.json"], "only the wanted item's files")
        XCTAssertEqual(try one.find(String(beta.prefix(19))).blobSize, Int64("beta.txt".utf8.count))

        let all = try SpoolInventory.load(spool, wanted: SpoolInventory.matchingAny(of: [shared]))
        XCTAssertThrowsError(try all.find(shared)) { XCTAssertEqual($0 as? SpoolError, .ambiguousItem(shared, 3)) }
    }
}
