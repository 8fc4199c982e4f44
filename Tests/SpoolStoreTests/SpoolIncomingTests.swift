import Foundation
import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// Items taken from subfolders of incoming/: renamed or copied out of the right folder, and no
/// symlink on the way is ever followed.
final class SpoolIncomingTests: StoreTestCase {
    private func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: temp.path(.incoming, path), withIntermediateDirectories: true)
    }

    func testAddFromSubfolder_renamesTheBlobIn_andSyncsThatFolder() throws {
        try makeFolder("2026-11-23/cam7")
        let source = try temp.write([1, 2, 3], to: "2026-11-23/cam7/fox.jpg", in: .incoming)
        let before = try XCTUnwrap(TemporarySpool.inode(of: source))
        let fs = RecordingFileSystem()
        let results = try temp.open(fs: fs).add([items.incoming("2026-11-23/cam7/fox.jpg")])
        guard case .added(let id) = results.first else { return XCTFail("\(results)") }
        XCTAssertEqual(TemporarySpool.inode(of: temp.path(.pending, "\(id).a0.blob"))?.inode, before.inode)
        XCTAssertNil(TemporarySpool.inode(of: source))
        XCTAssertTrue(fs.calls(.rename).contains { $0.name == "fox.jpg" && $0.directory == "cam7" }, "\(fs.calls(.rename))")
        XCTAssertTrue(fs.calls(.sync).contains { $0.name == "cam7" && $0.isDirectory }, "the source folder is made durable")
        XCTAssertTrue(FileManager.default.fileExists(atPath: temp.path(.incoming, "2026-11-23/cam7")), "folders stay")
    }

    func testAddFromSubfolder_hardLinkedFile_isCopiedAndItsNameRemoved() throws {
        try makeFolder("a")
        let source = try temp.write([4, 5], to: "a/linked.bin", in: .incoming)
        XCTAssertEqual(link(source, temp.directory + "/other-name"), 0)
        let spool = try temp.open()
        spool.takesHardLinkedFiles = true
        let results = try spool.add([items.incoming("a/linked.bin")])
        guard case .added(let id) = results.first else { return XCTFail("\(results)") }
        XCTAssertEqual(try temp.read(.pending, "\(id).a0.blob"), [4, 5])
        XCTAssertNil(TemporarySpool.inode(of: source))
        XCTAssertNotNil(TemporarySpool.inode(of: temp.directory + "/other-name"))
    }

    func testAddFromSubfolder_symlinkedFolderOnThePath_isNeverFollowed() throws {
        let outside = temp.directory + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try temp.write([7], atPath: outside + "/secret.txt")
        XCTAssertEqual(symlink(outside, temp.path(.incoming, "linked")), 0)
        let results = try temp.open().add([items.incoming("linked/secret.txt")])
        guard case .rejected(let reason) = results.first else { return XCTFail("\(results)") }
        XCTAssertTrue(reason.contains("incoming/linked/secret.txt"), reason)
        XCTAssertTrue(FileManager.default.fileExists(atPath: outside + "/secret.txt"))
        XCTAssertEqual(temp.names(in: .pending), [])
    }

    func testWalkIncoming_entersFoldersButNotDotFoldersOrLinks() throws {
        try makeFolder("a/b")
        try makeFolder(".wip/c")
        XCTAssertEqual(symlink(temp.directory, temp.path(.incoming, "link")), 0)
        var entered: [String] = []
        try spool.walkIncoming(entering: { path, _ in entered.append(path) }, visit: { _, _, _ in })
        XCTAssertEqual(entered, ["", "a", "a/b"])
        XCTAssertTrue(Spool.isWorkInProgress(".wip/c/x"))
        XCTAssertTrue(Spool.isWorkInProgress("a/.part"))
        XCTAssertFalse(Spool.isWorkInProgress("a.b/c.d"))
    }

    /// A producer removes a file it dropped while the batch that takes it is made durable (the
    /// syncfs between the staging and the renames): that file is a lost race, reported, and the
    /// rest of the batch is added; the daemon used to stop on the failed rename.
    func testSourceRemovedWhileTheBatchIsSynced_isRejected_andTheRestIsAdded() throws {
        let n = Spool.fileSystemSyncThreshold
        for i in 0..<n { try temp.write([UInt8(i)], to: "f\(i)", in: .incoming) }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let batch = (0..<n).map { items.incoming("f\($0)") }
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        fs.hold(.syncFileSystem, until: gate, entered: entered)
        let victim = temp.path(.incoming, "f3")
        DispatchQueue.global().async {
            entered.wait()
            unlink(victim)
            gate.signal()
        }
        let results = try spool.add(batch)

        XCTAssertEqual(fs.heldCallsTimedOut, 0)
        guard case .rejected(let reason) = results[3] else { return XCTFail("\(results[3])") }
        XCTAssertEqual(reason, "incoming/f3 vanished before it was taken; left to whoever moved it")
        for (i, result) in results.enumerated() where i != 3 { XCTAssertEqual(result, .added(batch[i].id)) }
        XCTAssertEqual(temp.names(in: .pending).count, 2 * (n - 1))
        XCTAssertEqual(temp.names(in: .tmp), [], "its staged json is removed")
    }
}
