import Glibc
import SpoolCore
@testable import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// The doubles themselves: a fault that never fires or a clock that drifts would make other tests lie.
final class TestSupportTests: XCTestCase {
    func testRecordingFileSystem_failsExactlyTheNthMatchingCall_once() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.failCall(.makeDirectory, nth: 2, errno: ENOSPC)
        XCTAssertNoThrow(try fs.makeDirectory("a", in: spool.root, mode: 0o700))
        XCTAssertThrowsError(try fs.makeDirectory("b", in: spool.root, mode: 0o700)) {
            XCTAssertEqual(($0 as? SystemError)?.errno, .noSpace)
        }
        XCTAssertNoThrow(try fs.makeDirectory("c", in: spool.root, mode: 0o700))
        XCTAssertEqual(Set(temp.rootNames()).intersection(["a", "b", "c"]), ["a", "c"])
        let made = fs.calls(.makeDirectory).suffix(3)
        XCTAssertEqual(made.map(\.name), ["a", "b", "c"])
        XCTAssertEqual(made.map(\.injectedErrno), [nil, ENOSPC, nil])
        XCTAssertEqual(made.map(\.directory), ["<root>", "<root>", "<root>"])
    }

    /// A durability call carries where it was asked for: the line of a direct `sync`, or the
    /// line that called a helper syncing for several callers (a group of folders, the index).
    func testRecordingFileSystem_recordsWhereEachSyncWasAskedFor() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        var items = TestItems()
        let id = items.id()
        fs.resetLog()
        try spool.syncFolders([.pending, .tmp]); let foldersLine: UInt = #line
        try spool.index.append([IndexRecord(.add, id, from: nil, to: ItemLocation(.pending, attempt: 0))])
        let appendLine: UInt = #line - 1
        let sites = fs.calls.compactMap(\.site)
        XCTAssertEqual(sites.map(\.line), [foldersLine, foldersLine, appendLine])
        XCTAssertEqual(Set(sites.map { "\($0.file)" }), ["SpoolStoreTests/TestSupportTests.swift"])
    }

    /// Extended attributes go through the seam too (a direct upload's name): recorded, and a
    /// file system without them can be scripted.
    func testRecordingFileSystem_recordsAndFailsExtendedAttributes() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        try temp.write([1, 2, 3], to: "a.bin", in: .incoming)
        try temp.write([4, 5, 6], to: "b.bin", in: .incoming)
        var items = TestItems()
        fs.resetLog()
        guard case .taken(let fd, _) = spool.takeForDirectUpload("a.bin", as: items.id("a.bin")) else { return XCTFail("not taken") }
        fs.close(fd)
        XCTAssertEqual(fs.calls(.setAttribute).map(\.description), ["setAttribute incoming/a.bin"])
        fs.failCall(.setAttribute, errno: ENOTSUP)
        guard case .unsupported = spool.takeForDirectUpload("b.bin", as: items.id("b.bin")) else { return XCTFail("not refused") }
        XCTAssertEqual(temp.names(in: .incoming), ["b.bin"], "left where it was")
    }

    func testRecordingFileSystem_namesDescriptorsByFolder() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        try spool.syncFolders([.pending])
        let fd = try fs.open("x", relativeTo: spool.descriptor(.tmp), flags: [.writeOnly, .create], mode: 0o600)
        try fs.writeAll(fd, [1], label: "x")
        try fs.sync(fd, label: "x")
        fs.close(fd)
        XCTAssertEqual(fs.calls.map(\.description), ["sync <root>/pending (dir)", "open tmp/x", "write tmp/x", "sync tmp/x", "close tmp/x"])
    }

    func testManualClock_movesOnlyWhenTold_andCyclesItsRandoms() {
        let clock = ManualClock(Timestamp(millisecondsSinceEpoch: 1_000), randoms: [0.25, 0.75])
        XCTAssertEqual(clock.now(), Timestamp(millisecondsSinceEpoch: 1_000))
        clock.advance(bySeconds: 1.5)
        XCTAssertEqual(clock.now(), Timestamp(millisecondsSinceEpoch: 2_500))
        XCTAssertEqual([clock.unitRandom(), clock.unitRandom(), clock.unitRandom()], [0.25, 0.75, 0.25])
        clock.set(Timestamp(millisecondsSinceEpoch: 7))
        XCTAssertEqual(clock.now().millisecondsSinceEpoch, 7)
    }

    func testTemporarySpool_isUniqueAndRemoved() throws {
        let a = try TemporarySpool(), b = try TemporarySpool()
        XCTAssertNotEqual(a.directory, b.directory)
        XCTAssertTrue(a.directory.hasPrefix("/tmp/spoold-tests-"))
        _ = try a.open()
        a.cleanUp()
        b.cleanUp()
        XCTAssertNil(TemporarySpool.inode(of: a.directory))
    }
}
