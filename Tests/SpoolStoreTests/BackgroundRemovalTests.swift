import Dispatch
import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// `Spool.apply(removingInBackground:)`: the files of recorded successes are unlinked on the
/// spool's own thread, compaction waits for them, and a failed unlink stops the next commit.
final class BackgroundRemovalTests: StoreTestCase {
    /// Adds `n` items and claims them; returns the `done` transitions that finish them.
    private func claimed(_ n: Int, on spool: Spool) throws -> [SpoolTransition] {
        var batch: [NewItem] = []
        for i in 0..<n {
            try temp.write([UInt8(i)], to: "f\(i)", in: .incoming)
            batch.append(items.incoming("f\(i)"))
        }
        XCTAssertEqual(try spool.add(batch), batch.map { .added($0.id) })
        let pending = ItemLocation(.pending, attempt: 0), inflight = ItemLocation(.inflight, attempt: 1)
        XCTAssertEqual(try spool.commit(batch.map { SpoolTransition(IndexRecord(.claim, $0.id, from: pending, to: inflight)) }),
                       batch.map { _ in .moved })
        return batch.map { SpoolTransition(IndexRecord(.done, $0.id, from: inflight, to: nil)) }
    }

    /// `n` claimed items on a recording file system whose unlinks in inflight/ wait for `gate`.
    private func heldRemovals(_ n: Int) throws -> (fs: RecordingFileSystem, spool: Spool, done: [SpoolTransition], gate: DispatchSemaphore) {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let done = try claimed(n, on: spool)
        let gate = DispatchSemaphore(value: 0)
        fs.hold(.remove, until: gate) { $0.directory == "inflight" }
        return (fs, spool, done, gate)
    }

    func testApply_returnsBeforeTheUnlinks_andDrainWaitsForThem() throws {
        let (fs, spool, done, gate) = try heldRemovals(2)
        spool.spareJSONLimit = 0  // every json unlinked, none kept for reuse

        XCTAssertEqual(try spool.commit(done, removingInBackground: true), [.moved, .moved])
        XCTAssertEqual(temp.names(in: .inflight).count, 4, "nothing is unlinked on the caller's thread")
        XCTAssertEqual(fs.calls(.remove).filter { $0.directory == "inflight" }, [])

        gate.signal()
        try spool.drainRemovals()
        XCTAssertEqual(temp.names(in: .inflight), [])
        XCTAssertEqual(fs.calls(.remove).filter { $0.directory == "inflight" }.map { $0.name.hasSuffix(".json") }, [true, false, true, false],
                       "json first, then blob")
    }

    /// A direct upload's success is recorded by nothing but its blob's removal: inflight/ is
    /// fsynced after it, on the background thread, once for the batches queued meanwhile (else a
    /// power cut could bring the blob back to be sent again).
    func testRemoveDirectBlobs_syncsInflightAfterTheRemovals_onceForBatchesQueuedTogether() throws {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        var ids: [ItemID] = []
        for name in ["a", "b", "c"] {
            try temp.write([1], to: name, in: .incoming)
            let id = items.id(name)
            guard case .taken(let fd, _) = spool.takeForDirectUpload(name, as: id) else { return XCTFail("\(name) not taken") }
            spool.closeBlob(fd)
            ids.append(id)
        }
        let gate = DispatchSemaphore(value: 0)
        fs.hold(.remove, until: gate) { $0.directory == "inflight" }
        fs.resetLog()
        spool.removeDirectBlobs([ids[0]])
        spool.removeDirectBlobs([ids[1], ids[2]])
        gate.signal()
        try spool.drainRemovals()
        let calls = fs.calls.filter { $0.operation == .remove || $0.operation == .sync }
        XCTAssertEqual(calls.map(\.operation), [.remove, .remove, .remove, .sync], calls.map(\.description).joined(separator: "\n"))
        XCTAssertEqual(calls.last?.name, "inflight")
        XCTAssertEqual(calls.last?.isDirectory, true)
        XCTAssertEqual(temp.names(in: .inflight), [])
    }

    func testCompaction_waitsForPendingRemovals() throws {
        let (fs, spool, done, gate) = try heldRemovals(1)
        _ = try spool.commit(done, removingInBackground: true)
        fs.resetLog()
        // Opened late on purpose: a compaction that did not wait would rename the new index first.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { gate.signal() }

        try spool.compactIndex()

        let calls = fs.calls
        let removed = try XCTUnwrap(calls.lastIndex { $0.operation == .remove && $0.directory == "inflight" })
        let indexReplaced = try XCTUnwrap(calls.firstIndex { $0.operation == .rename && $0.toName == SpoolFolder.indexFileName })
        XCTAssertLessThan(removed, indexReplaced, "a done record is dropped only after its files are gone: \(calls)")
        XCTAssertEqual(temp.names(in: .inflight), [])
    }

    func testFailedRemoval_failsTheNextCommit() throws {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let done = try claimed(2, on: spool)
        fs.failCall(.remove, errno: EIO)

        XCTAssertEqual(try spool.commit([done[0]], removingInBackground: true), [.moved])
        XCTAssertThrowsError(try spool.drainRemovals()) { XCTAssertEqual(($0 as? SystemError)?.errno, .ioError) }
        XCTAssertThrowsError(try spool.commit([done[1]]), "a failed removal stops taking work") {
            XCTAssertEqual(($0 as? SystemError)?.errno, .ioError)
        }
    }

    func testRemovalOfAFileAnOperatorPurged_isNotAFailure() throws {
        let spool = try temp.open()
        let done = try claimed(1, on: spool)
        for name in temp.names(in: .inflight) { XCTAssertEqual(unlink(temp.path(.inflight, name)), 0) }
        _ = try spool.commit(done, removingInBackground: true)
        XCTAssertNoThrow(try spool.drainRemovals())
        XCTAssertNoThrow(try spool.commit([]))
    }

    func testApply_keepsTheJsonsAsSpares_whichTheNextStagedJsonsReuse() throws {
        let (fs, spool, done, gate) = try heldRemovals(3)
        spool.spareJSONLimit = 2
        let inodes = try done.map { try fs.status(of: ItemFileName(id: $0.record.id, attempt: 1, kind: .json).description, in: spool.descriptor(.inflight)).inode }

        _ = try spool.commit(done, removingInBackground: true)
        XCTAssertEqual(temp.names(in: .tmp).sorted(), ["spare.0", "spare.1"], "renamed into tmp/ on the caller's thread")
        XCTAssertEqual(spool.spareJSONCount, 2)
        gate.signal()
        try spool.drainRemovals()
        XCTAssertEqual(temp.names(in: .inflight), [], "the third json (no room among the spares) and the blobs unlinked")

        // A hard link elsewhere: that spare is not the spool's alone, so it is removed, not written.
        XCTAssertEqual(link(temp.path(.tmp, "spare.1"), temp.path(.incoming, ".linked")), 0)
        fs.resetLog()
        try temp.write([1], to: "next", in: .incoming)
        let next = items.incoming("next")
        XCTAssertEqual(try spool.add([next]), [.added(next.id)])
        let json = ItemFileName(id: next.id, attempt: 0, kind: .json).description
        XCTAssertEqual(try fs.status(of: json, in: spool.descriptor(.pending)).inode, inodes[0], "spare.0 became the new json")
        XCTAssertEqual(try spool.readMetadata(next.id, at: ItemLocation(.pending, attempt: 0)).originalName, "next")
        XCTAssertEqual(fs.calls(.open).filter { $0.directory == "tmp" }.map(\.name), ["spare.1", "spare.0"])
        XCTAssertEqual(temp.names(in: .tmp), [], "the linked spare was removed")
        XCTAssertEqual(spool.spareJSONCount, 0)
    }

    func testReusedSpare_isCutOnlyWhenTheNewJsonIsShorter() throws {
        let (fs, spool, done, gate) = try heldRemovals(2)
        spool.spareJSONLimit = 2
        _ = try spool.commit(done, removingInBackground: true)
        gate.signal()
        try spool.drainRemovals()
        XCTAssertEqual(spool.spareJSONCount, 2)

        fs.resetLog()
        try temp.write([1], to: "a-longer-name", in: .incoming)
        let longer = items.incoming("a-longer-name")
        XCTAssertEqual(try spool.add([longer]), [.added(longer.id)])
        XCTAssertEqual(fs.calls(.truncate), [], "a json as long as the spare or longer overwrites all of it")
        try temp.write([1], to: "n", in: .incoming)
        let shorter = items.incoming("n")
        XCTAssertEqual(try spool.add([shorter]), [.added(shorter.id)])
        XCTAssertEqual(fs.calls(.truncate).count, 1, "a shorter json is cut to its length")
        XCTAssertEqual(spool.spareJSONCount, 0)
        for item in [longer, shorter] {
            let location = ItemLocation(.pending, attempt: 0)
            let name = ItemFileName(id: item.id, attempt: 0, kind: .json).description
            let bytes = try XCTUnwrap(FileManager.default.contents(atPath: temp.path(.pending, name)))
            XCTAssertEqual(Array(bytes), MetadataCodec.encode(try spool.readMetadata(item.id, at: location)), name)
        }
    }
}
