import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A new item is durable before it is acknowledged, and a batch pays one sync per folder (docs/guarantees.md
/// "Crash safety"), checked on the recorded system calls.
final class SpoolSyscallOrderTests: StoreTestCase {
    typealias Call = RecordingFileSystem.Call

    private func index(_ calls: [Call], file: StaticString = #filePath, line: UInt = #line, where match: (Call) -> Bool) -> Int {
        guard let i = calls.firstIndex(where: match) else {
            XCTFail("no such call in \(calls.map(\.description))", file: file, line: line)
            return -1
        }
        return i
    }

    private func isDataSync(_ c: Call, _ name: String, in dir: String) -> Bool {
        c.operation == .sync && !c.isDirectory && c.name == name && c.directory == dir
    }

    private func checkAddOrder(source: NewItem, sourceSync: (Call) -> Bool) throws {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        let results = try spool.add([source])
        XCTAssertEqual(results, [.added(source.id)])
        let calls = fs.calls
        let blob = "\(source.id).a0.blob", json = "\(source.id).a0.json"

        let blobSync = index(calls, where: sourceSync)
        let jsonSync = index(calls) { self.isDataSync($0, json, in: "tmp") }
        let jsonWrite = index(calls) { $0.operation == .write && $0.name == json }
        let indexWrite = index(calls) { $0.operation == .write && $0.name == SpoolFolder.indexFileName }
        let indexSync = index(calls) { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }
        let blobRename = index(calls) { $0.operation == .rename && $0.toName == blob && $0.toDirectory == "pending" }
        let jsonRename = index(calls) { $0.operation == .rename && $0.toName == json && $0.toDirectory == "pending" }
        let pendingSync = index(calls) { $0.operation == .sync && $0.isDirectory && $0.name == "pending" }
        let trace = calls.map(\.description).joined(separator: "\n")

        XCTAssertLessThan(blobSync, blobRename, "blob data synced before its rename\n\(trace)")
        XCTAssertLessThan(jsonWrite, jsonSync, trace)
        XCTAssertLessThan(jsonSync, jsonRename, "json data synced before its rename\n\(trace)")
        XCTAssertLessThan(indexWrite, indexSync, trace)
        XCTAssertLessThan(indexSync, blobRename, "index record durable before the renames\n\(trace)")
        XCTAssertLessThan(blobRename, jsonRename, "json renamed last\n\(trace)")
        XCTAssertLessThan(jsonRename, pendingSync, "pending/ synced after the renames\n\(trace)")
        XCTAssertEqual(calls.filter { $0.operation == .sync && $0.isDirectory && $0.name == "pending" }.count, 1, trace)
        // Nothing renamed after the last directory sync: success is reported on durable state.
        let lastRename = calls.lastIndex { $0.operation == .rename }!
        let lastDirSync = calls.lastIndex { $0.operation == .sync && $0.isDirectory }!
        XCTAssertLessThan(lastRename, lastDirSync, trace)
    }

    func testAddFromIncoming_syncsDataThenIndexThenRenamesThenFolder() throws {
        try temp.write(Array("hello".utf8), to: "a.txt", in: .incoming)
        let item = items.incoming("a.txt")
        try checkAddOrder(source: item) { self.isDataSync($0, "a.txt", in: "incoming") }
    }

    func testAddFromIncoming_alsoSyncsIncomingAfterTheRename() throws {
        try temp.write(Array("hello".utf8), to: "a.txt", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let item = items.incoming("a.txt")
        fs.resetLog()
        _ = try spool.add([item])
        let calls = fs.calls
        let rename = index(calls) { $0.operation == .rename && $0.directory == "incoming" }
        let incomingSync = index(calls) { $0.operation == .sync && $0.isDirectory && $0.name == "incoming" }
        XCTAssertLessThan(rename, incomingSync)
    }

    func testAddByCopy_syncsDataThenIndexThenRenamesThenFolder() throws {
        let source = try temp.write(Array(repeating: 7, count: 3000), atPath: temp.directory + "/outside.bin")
        let item = items.external(source, move: false)
        try checkAddOrder(source: item) { self.isDataSync($0, "\(item.id).a0.blob", in: "tmp") }
    }

    /// `enqueue --move` of a file it must copy (a second hard link): the source goes only once
    /// the item is durable, and through the `FileSystem` seam like every other removal (so a
    /// recording or power-cut file system sees it).
    func testAddByCopyWithMove_removesTheSourceThroughTheSeam_afterTheFolderSyncs() throws {
        let source = try temp.write(Array(repeating: 7, count: 300), atPath: temp.directory + "/outside.bin")
        XCTAssertEqual(link(source, temp.directory + "/second-link.bin"), 0)
        let item = items.external(source, move: true)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        XCTAssertEqual(try spool.add([item]), [.added(item.id)])
        let calls = fs.calls
        let trace = calls.map(\.description).joined(separator: "\n")
        let removal = index(calls) { $0.operation == .remove && $0.name == source }
        let lastDirSync = try XCTUnwrap(calls.lastIndex { $0.operation == .sync && $0.isDirectory })
        XCTAssertLessThan(lastDirSync, removal, trace)
        XCTAssertNil(TemporarySpool.inode(of: source), "the source is removed")
    }

    private func addBatch(_ n: Int) throws -> [Call] {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        var batch: [NewItem] = []
        for i in 0..<n {
            try temp.write([UInt8(i)], to: "f\(i)", in: .incoming)
            batch.append(items.incoming("f\(i)"))
        }
        fs.resetLog()
        XCTAssertEqual(try spool.add(batch).count, n)
        return fs.calls
    }

    func testSmallAddBatch_syncsEachFolderOnce_andTheIndexOnce() throws {
        let calls = try addBatch(5)
        XCTAssertEqual(calls.filter { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }.count, 1)
        for folder in ["pending", "tmp", "incoming"] {
            XCTAssertEqual(calls.filter { $0.operation == .sync && $0.isDirectory && $0.name == folder }.count, 1, folder)
        }
        XCTAssertEqual(calls.filter { $0.operation == .syncFileSystem }.count, 0)
    }

    func testLargeAddBatch_isTwoSyncfs_oneBeforeTheFirstRename_oneAfterTheLast() throws {
        let calls = try addBatch(20)
        let trace = calls.map(\.description).joined(separator: "\n")
        XCTAssertEqual(calls.filter { $0.operation == .sync }.count, 0, trace)
        let syncs = calls.indices.filter { calls[$0].operation == .syncFileSystem }
        XCTAssertEqual(syncs.count, 2, trace)
        let lastWrite = calls.lastIndex { $0.operation == .write }!
        let indexWrite = calls.lastIndex { $0.operation == .write && $0.name == SpoolFolder.indexFileName }!
        let firstRename = index(calls) { $0.operation == .rename }
        let lastRename = calls.lastIndex { $0.operation == .rename }!
        XCTAssertLessThan(lastWrite, syncs[0], "every json and the index records are written before the first syncfs")
        XCTAssertLessThan(indexWrite, syncs[0])
        XCTAssertLessThan(syncs[0], firstRename, "nothing is renamed before it is durable")
        XCTAssertLessThan(lastRename, syncs[1], "the renames are made durable before add returns")
    }

    /// A batch of `n` moves out of pending/: claims by default, or parking in failed/ (a move
    /// that, unlike a claim, must make its folders durable itself).
    private func claimBatch(_ n: Int, withMetadata: Bool, parking: Bool = false) throws -> [Call] {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        var batch: [NewItem] = []
        for i in 0..<n {
            try temp.write([UInt8(i & 255)], to: "f\(i)", in: .incoming)
            batch.append(items.incoming("f\(i)"))
        }
        _ = try spool.add(batch)
        fs.resetLog()
        let transitions = batch.map {
            SpoolTransition(
                parking
                    ? IndexRecord(.fail, $0.id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.failed, attempt: 0))
                    : IndexRecord(.claim, $0.id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)),
                metadata: withMetadata ? $0.metadata : nil)
        }
        XCTAssertEqual(try spool.commit(transitions), Array(repeating: .moved, count: n))
        XCTAssertEqual(temp.names(in: parking ? .failed : .inflight).count, 2 * n)
        XCTAssertEqual(temp.names(in: .pending), [])
        XCTAssertEqual(temp.names(in: .tmp), [])
        return fs.calls
    }

    private func directorySyncs(_ calls: [Call]) -> [String: Int] {
        calls.filter { $0.operation == .sync && $0.isDirectory }.reduce(into: [:]) { $0[$1.name, default: 0] += 1 }
    }

    func testCommitOf50Claims_isOneIndexSync_andNoFolderSync() throws {
        // A claim is durable once its index record is synced (recovery completes it from the
        // index), so 50 claims cost exactly one fsync, before any rename.
        let calls = try claimBatch(50, withMetadata: false)
        let trace = calls.map(\.description).joined(separator: "\n")
        XCTAssertEqual(calls.filter { $0.operation == .sync }.count, 1, trace)
        XCTAssertEqual(calls.filter { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }.count, 1, trace)
        XCTAssertEqual(directorySyncs(calls), [:], trace)
        XCTAssertEqual(calls.filter { $0.operation == .rename }.count, 100)
        let indexSync = index(calls) { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }
        let firstRename = index(calls) { $0.operation == .rename }
        XCTAssertLessThan(indexSync, firstRename)
        // Each blob moves before its json.
        for i in stride(from: 0, to: 100, by: 2) {
            let pair = calls.filter { $0.operation == .rename }[i...].prefix(2)
            XCTAssertTrue(pair.first!.name.hasSuffix(".blob") && pair.last!.name.hasSuffix(".json"))
        }
    }

    func testCommitOf50Parkings_syncsEachTouchedFolderOnceAfterTheRenames() throws {
        let calls = try claimBatch(50, withMetadata: false, parking: true)
        let trace = calls.map(\.description).joined(separator: "\n")
        XCTAssertEqual(calls.filter { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }.count, 1, trace)
        XCTAssertEqual(directorySyncs(calls), ["pending": 1, "failed": 1], trace)
        let lastRename = calls.lastIndex { $0.operation == .rename }!
        let firstDirSync = index(calls) { $0.operation == .sync && $0.isDirectory }
        XCTAssertLessThan(lastRename, firstDirSync)
    }

    func testCommit_directorySyncCountDoesNotGrowWithTheBatch() throws {
        for withMetadata in [false, true] {
            let small = directorySyncs(try claimBatch(3, withMetadata: withMetadata, parking: true))
            let larger = directorySyncs(try claimBatch(Spool.fileSystemSyncThreshold - 1, withMetadata: withMetadata, parking: true))
            XCTAssertEqual(small, larger, "metadata: \(withMetadata)")
            XCTAssertEqual(larger.values.reduce(0, +), withMetadata ? 3 : 2)
        }
    }

    func testCommitOfManyRewrittenJsons_isTwoSyncfs_aroundTheRenames() throws {
        let calls = try claimBatch(50, withMetadata: true, parking: true)
        let trace = calls.map(\.description).joined(separator: "\n")
        XCTAssertEqual(calls.filter { $0.operation == .sync }.count, 0, trace)
        let syncs = calls.indices.filter { calls[$0].operation == .syncFileSystem }
        XCTAssertEqual(syncs.count, 2, trace)
        XCTAssertLessThan(syncs[0], index(calls) { $0.operation == .rename })
        XCTAssertLessThan(calls.lastIndex { $0.operation == .rename }!, syncs[1])
    }

    func testCommitWithMetadata_syncsEachStagedJsonBeforeTheIndexAndItsRename() throws {
        let calls = try claimBatch(5, withMetadata: true)
        let indexSync = index(calls) { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }
        for sync in calls.indices where calls[sync].operation == .sync && calls[sync].directory == "tmp" {
            let name = calls[sync].name
            let rename = index(calls) { $0.operation == .rename && $0.name == name && $0.directory == "tmp" }
            XCTAssertLessThan(sync, indexSync)
            XCTAssertLessThan(sync, rename)
        }
        XCTAssertEqual(calls.filter { $0.operation == .sync && $0.directory == "tmp" }.count, 5)
    }
}
