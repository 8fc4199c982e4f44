import Foundation
import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// Injected EIO / ENOSPC during `add` and `commit` (a failed write or fsync is never retried and trusted): refused cleanly, nothing
/// half-acknowledged, the source left where it was.
final class SpoolFaultTests: StoreTestCase {
    typealias Call = RecordingFileSystem.Call

    /// Adds one file with a fault armed; checks the add throws, nothing shows in pending/, the
    /// source is intact. Returns what is left in tmp/ (should be nothing).
    private func addWithFault(
        copy: Bool, _ operation: RecordingFileSystem.Operation, _ code: Int32,
        where match: @escaping @Sendable (Call) -> Bool, file: StaticString = #filePath, line: UInt = #line
    ) throws -> [String] {
        let content = Array(repeating: UInt8(42), count: 5000)
        try temp.write(content, to: "data.bin", in: .incoming)
        if copy { XCTAssertEqual(link(temp.path(.incoming, "data.bin"), temp.directory + "/second-link"), 0) }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        spool.takesHardLinkedFiles = copy
        let item = items.incoming("data.bin")
        fs.failCall(operation, errno: code, where: match)
        XCTAssertThrowsError(try spool.add([item]), file: file, line: line) { error in
            // A full disk before anything was kept is told apart (the daemon pauses intake on it).
            if case SpoolError.outOfSpace(_, let cause) = error {
                XCTAssertEqual(cause.errno.rawValue, code, file: file, line: line)
                XCTAssertTrue(code == ENOSPC && cause.call != .fsync, "\(error)", file: file, line: line)
            } else {
                XCTAssertEqual((error as? SystemError)?.errno.rawValue, code, "\(error)", file: file, line: line)
            }
        }
        XCTAssertTrue(fs.calls.contains { $0.injectedErrno == code }, "fault never fired", file: file, line: line)
        XCTAssertEqual(temp.names(in: .pending), [], file: file, line: line)
        XCTAssertEqual(temp.names(in: .incoming), ["data.bin"], file: file, line: line)
        XCTAssertEqual(try temp.read(.incoming, "data.bin"), content, file: file, line: line)
        return temp.names(in: .tmp)
    }

    private func named(_ name: String) -> @Sendable (Call) -> Bool { { $0.name == name } }
    private func suffix(_ s: String) -> @Sendable (Call) -> Bool { { $0.name.hasSuffix(s) && $0.directory == "tmp" } }

    func testFsyncEIO_onTheIncomingBlob_refusesTheAdd() throws {
        XCTAssertEqual(try addWithFault(copy: false, .sync, EIO, where: named("data.bin")), [])
    }

    func testFsyncEIO_onTheStagedJson_refusesTheAdd() throws {
        XCTAssertEqual(try addWithFault(copy: false, .sync, EIO, where: suffix(".json")), [])
    }

    func testWriteENOSPC_onTheStagedJson_refusesTheAdd() throws {
        XCTAssertEqual(try addWithFault(copy: false, .write, ENOSPC, where: suffix(".json")), [])
    }

    func testWriteENOSPC_onTheCopiedBlob_refusesTheAdd() throws {
        XCTAssertEqual(try addWithFault(copy: true, .write, ENOSPC, where: suffix(".blob")), [])
    }

    func testFsyncEIO_onTheCopiedBlob_refusesTheAdd() throws {
        XCTAssertEqual(try addWithFault(copy: true, .sync, EIO, where: suffix(".blob")), [])
    }

    func testFsyncEIO_onTheJsonAfterACopiedBlob_cleansTmp() throws {
        let left = try addWithFault(copy: true, .sync, EIO, where: suffix(".json"))
        XCTAssertEqual(left, [], "a refused add leaves no blob copied into tmp/")
    }

    func testFsyncEIO_onTheIndex_refusesTheAdd_andCleansTmp() throws {
        let left = try addWithFault(copy: false, .sync, EIO, where: named(SpoolFolder.indexFileName))
        XCTAssertEqual(left, [], "a refused index append leaves nothing staged in tmp/")
    }

    func testWriteENOSPC_onTheIndex_refusesTheAdd_andCleansTmp() throws {
        let left = try addWithFault(copy: false, .write, ENOSPC, where: named(SpoolFolder.indexFileName))
        XCTAssertEqual(left, [], "a refused index append leaves nothing staged in tmp/")
    }

    func testFsyncEIO_onThePendingFolder_throws_butLosesNothing() throws {
        try temp.write([1, 2, 3], to: "x", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let item = items.incoming("x")
        fs.failCall(.sync, errno: EIO) { $0.isDirectory && $0.name == "pending" }
        XCTAssertThrowsError(try spool.add([item]))
        // Not acknowledged; the renames happened, so the item is in pending/ for recovery to judge.
        XCTAssertEqual(temp.names(in: .pending), ["\(item.id).a0.blob", "\(item.id).a0.json"])
        XCTAssertEqual(temp.names(in: .incoming), [])
    }

    func testFsyncEIO_isNeverRetried() throws {
        try temp.write([1], to: "x", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.failCall(.sync, errno: EIO) { $0.name == SpoolFolder.indexFileName }
        fs.resetLog()
        XCTAssertThrowsError(try spool.add([items.incoming("x")]))
        XCTAssertEqual(fs.calls.filter { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }.count, 1)
    }

    func testCommit_indexFsyncEIO_movesNothing() throws {
        let spool = try temp.open()
        try temp.write([1], to: "x", in: .incoming)
        let item = items.incoming("x")
        _ = try spool.add([item])
        let fs = RecordingFileSystem()
        let recorded = try temp.open(fs: fs)
        fs.failCall(.sync, errno: EIO) { $0.name == SpoolFolder.indexFileName }
        let claim = SpoolTransition(IndexRecord(.claim, item.id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)))
        XCTAssertThrowsError(try recorded.commit([claim]))
        XCTAssertEqual(temp.names(in: .pending).count, 2)
        XCTAssertEqual(temp.names(in: .inflight), [])
        XCTAssertFalse(fs.calls.contains { $0.operation == .rename })
    }

    func testSyncfsEIO_inALargeAdd_refusesTheWholeBatch_andLeavesNoTrace() throws {
        let n = Spool.fileSystemSyncThreshold
        for i in 0..<n { try temp.write([UInt8(i)], to: "f\(i)", in: .incoming) }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let batch = (0..<n).map { items.incoming("f\($0)") }
        fs.failCall(.syncFileSystem, errno: EIO)
        XCTAssertThrowsError(try spool.add(batch)) { XCTAssertEqual(($0 as? SystemError)?.errno, .ioError, "\($0)") }
        XCTAssertEqual(temp.names(in: .pending), [])
        XCTAssertEqual(temp.names(in: .tmp), [])
        XCTAssertEqual(temp.names(in: .incoming).count, n, "every source left where it was")
        XCTAssertFalse(fs.calls.contains { $0.operation == .rename }, "nothing renamed after a failed syncfs")
    }

    // MARK: The index reserve (a full disk while outcomes are recorded)

    private func claim(_ id: ItemID) -> SpoolTransition {
        SpoolTransition(IndexRecord(.claim, id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)))
    }

    func testCommit_indexWriteENOSPC_releasesTheReserve_andRecordsTheOutcomeWithNoTornRecord() throws {
        try temp.write([1], to: "x", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let item = items.incoming("x")
        _ = try spool.add([item])
        XCTAssertTrue(spool.reserve.fill())
        XCTAssertEqual(try temp.read(atPath: temp.spoolPath + "/" + SpaceReserve.fileName).count, Int(SpaceReserve.size))
        // The disk is full: the write of the claim record gets half its bytes in, then ENOSPC.
        fs.failCall(.write, errno: ENOSPC) { $0.name == SpoolFolder.indexFileName }

        XCTAssertEqual(try spool.commit([claim(item.id)]), [.moved])

        XCTAssertFalse(spool.reserve.isWhole)
        XCTAssertEqual(try temp.read(atPath: temp.spoolPath + "/" + SpaceReserve.fileName), [], "the reserve was released")
        XCTAssertEqual(temp.names(in: .inflight), ["\(item.id).a1.blob", "\(item.id).a1.json"])
        let scan = IndexLogCodec.decode(try temp.read(atPath: temp.spoolPath + "/" + SpoolFolder.indexFileName))
        XCTAssertEqual(scan.damage, .none)
        XCTAssertEqual(scan.records.map(\.operation), [.add, .claim])
    }

    func testCommit_indexFsyncEIO_isNotRetriedFromTheReserve() throws {
        try temp.write([1], to: "x", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let item = items.incoming("x")
        _ = try spool.add([item])
        XCTAssertTrue(spool.reserve.fill())
        fs.failCall(.sync, errno: ENOSPC) { $0.name == SpoolFolder.indexFileName }
        fs.resetLog()

        XCTAssertThrowsError(try spool.commit([claim(item.id)])) { XCTAssertEqual(($0 as? SystemError)?.errno, .noSpace) }

        XCTAssertTrue(spool.reserve.isWhole, "a failed fsync is final: no second try")
        XCTAssertEqual(fs.calls.filter { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }.count, 1)
        XCTAssertFalse(fs.calls.contains { $0.operation == .rename })
    }

    func testCommit_stagedJsonENOSPC_withoutAReserve_throwsAndMovesNothing() throws {
        try temp.write([1], to: "x", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let item = items.incoming("x")
        _ = try spool.add([item])
        let metadata = try spool.readMetadata(item.id, at: ItemLocation(.pending, attempt: 0))
        fs.failCall(.write, errno: ENOSPC) { $0.directory == "tmp" }
        let retry = SpoolTransition(
            IndexRecord(.requeue, item.id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.pending, attempt: 0)),
            metadata: metadata)

        XCTAssertThrowsError(try spool.commit([retry])) { XCTAssertEqual(($0 as? SystemError)?.errno, .noSpace) }
        XCTAssertEqual(temp.names(in: .tmp), [])
    }

    func testCompaction_onAFullDisk_cutsTheIndexToItsHeaderInPlace() throws {
        try temp.write([1], to: "x", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        _ = try spool.add([items.incoming("x")])
        let indexPath = temp.spoolPath + "/" + SpoolFolder.indexFileName
        var before = stat()
        XCTAssertEqual(stat(indexPath, &before), 0)
        fs.failCall(.write, errno: ENOSPC) { $0.name == SpoolFolder.indexFileName + ".compact" }

        try spool.compactIndex()

        XCTAssertEqual(try temp.read(atPath: indexPath), IndexLogCodec.encodeHeader())
        var after = stat()
        XCTAssertEqual(stat(indexPath, &after), 0)
        XCTAssertEqual(after.st_ino, before.st_ino, "the same file, cut where it is: no new file needed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: indexPath + ".compact"))
    }
}
