import Foundation
import Glibc
import SpoolSystem
import SpoolTestSupport
import XCTest

/// The power-cut model itself (`PowerCutFileSystem`, `CrashStates`): what a sync keeps, what it
/// does not, torn writes, renames whole or in halves. The explorer's verdicts are only as good
/// as these states.
final class PowerCutFileSystemTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/spoold-powercut-test-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { throw SystemError.last("mkdtemp", path: "/tmp") }
        root = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        XCTAssertEqual(mkdir(root + "/a", 0o700), 0)
        XCTAssertEqual(mkdir(root + "/b", 0o700), 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: root) }

    /// Every state a cut at the end of the trace may leave, as `path=content` listings.
    private func states(_ fs: PowerCutFileSystem, splitRenames: Bool = false) -> Set<String> {
        let states = CrashStates(base: fs.base, trace: fs.trace, splitRenames: splitRenames)
        var random = SeededRandom(state: 1)
        let point = states.trace.count
        let durable = states.durableTree(at: point)
        return Set(states.choices(at: point, limit: 1000, random: &random).choices.map { choice in
            let tree = states.tree(choice, durable: durable)
            var files: [String] = []
            for (folderName, folder) in (tree.entries[FileTree.root] ?? [:]).sorted(by: { $0.key < $1.key }) {
                for (name, inode) in (tree.entries[folder] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    files.append("\(folderName)/\(name)=\(String(decoding: tree.inodes[inode]!.content, as: UTF8.self))")
                }
            }
            return files.joined(separator: " ")
        })
    }

    private func folder(_ fs: PowerCutFileSystem, _ name: String) throws -> FileDescriptor {
        let rootFD = try fs.open(root, relativeTo: nil, flags: [.directory, .followSymlinks], mode: 0)
        defer { fs.close(rootFD) }
        return try fs.open(name, relativeTo: rootFD, flags: [.directory], mode: 0)
    }

    func testAWriteBeforeAFileSync_isKept_theOneAfter_mayBeLostOrTorn_andTheNameMayBeLost() throws {
        let fs = try PowerCutFileSystem(rootPath: root)
        let a = try folder(fs, "a")
        let file = try fs.open("f", relativeTo: a, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
        try fs.writeAll(file, Array("one".utf8), label: "f")
        try fs.sync(file, label: "f")
        try fs.writeAll(file, Array("two".utf8), label: "f")
        fs.close(file)
        let found = states(fs)
        XCTAssertTrue(found.contains(""), "the name was never synced: it may be lost")
        XCTAssertTrue(found.contains("a/f=one"))
        XCTAssertTrue(found.contains("a/f=onetwo"))
        XCTAssertTrue(found.contains("a/f=onet"), "the unsynced write torn in half: \(found.sorted())")
        XCTAssertTrue(found.contains { $0.hasPrefix("a/f=one") && $0.count == "a/f=onetwo".count && !$0.hasSuffix("two") }, "or garbage")
        XCTAssertFalse(found.contains { $0.hasPrefix("a/f=") && !$0.hasPrefix("a/f=one") }, "the synced write is never lost behind the name")
    }

    func testAFolderSync_keepsTheRenameInto_itWhole_andTheCreateItBuildsOn_butNotTheFilesBytes() throws {
        let fs = try PowerCutFileSystem(rootPath: root)
        let (a, b) = (try folder(fs, "a"), try folder(fs, "b"))
        let file = try fs.open("x", relativeTo: a, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
        try fs.writeAll(file, Array("data".utf8), label: "x")
        fs.close(file)
        try fs.rename("x", in: a, to: "y", in: b)
        try fs.sync(b, label: "b")
        let found = states(fs)
        XCTAssertEqual(Set(found.map { $0.split(separator: "=")[0] }), ["b/y"], "renamed whole, never in both or neither: \(found.sorted())")
        XCTAssertTrue(found.contains("b/y="), "its bytes were never synced")
        XCTAssertTrue(found.contains("b/y=data"))

        let split = states(fs, splitRenames: true)
        XCTAssertTrue(split.contains { $0.contains("a/x") && $0.contains("b/y") }, "in both folders: \(split.sorted())")
        XCTAssertFalse(split.contains { !$0.contains("b/y") }, "b/'s half was synced")
    }

    func testSyncfs_keepsEverything_unlessLeftOut() throws {
        for leftOut in [false, true] {
            let fs = try PowerCutFileSystem(rootPath: root)
            let a = try folder(fs, "a")
            if leftOut { fs.leftOut = SyncKey(site: SourceLocation(line: #line + 5), target: "syncfs") }
            let name = leftOut ? "left-out" : "kept"
            let file = try fs.open(name, relativeTo: a, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
            try fs.writeAll(file, Array("data".utf8), label: name)
            fs.close(file)
            try fs.syncFileSystem(a, label: "a")
            XCTAssertEqual(states(fs) == ["a/\(name)=data"], !leftOut, "\(states(fs).sorted())")
            XCTAssertEqual(fs.durabilityCalls.count, 1)
            try FileManager.default.removeItem(atPath: "\(root)/a/\(name)")
        }
    }

    /// The explorer's check that a second start changed nothing (`holdsTheSame`) sees what the
    /// fingerprint sees: each difference in bytes, names, folders and attributes, and a json's
    /// mtime; another file's mtime is no difference.
    func testHoldsTheSame_seesWhatTheFingerprintSees() throws {
        XCTAssertEqual(mkdir(root + "/a/sub", 0o700), 0)
        try Data("item".utf8).write(to: URL(fileURLWithPath: root + "/a/x.json"))
        try Data("blob".utf8).write(to: URL(fileURLWithPath: root + "/a/sub/x.blob"))
        let names = PowerCutFileSystem.attributeNames
        func setAttribute(_ value: String) throws {
            let fs = PosixFileSystem()
            let fd = try fs.open(root + "/a/sub/x.blob", relativeTo: nil, flags: [.readOnly], mode: 0)
            defer { fs.close(fd) }
            try fs.setAttribute(try XCTUnwrap(names.first), Array(value.utf8), of: fd)
        }
        try setAttribute("v1")
        let base = try FileTree.read(root, attributeNames: names).0
        XCTAssertTrue(base.holdsTheSame(as: try FileTree.read(root, attributeNames: names).0))

        func touch(_ path: String, seconds: Int) {
            var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
            XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        }
        let changes: [(String, () throws -> Void, () throws -> Void, Bool)] = [
            ("bytes", { try Data("blob!".utf8).write(to: URL(fileURLWithPath: self.root + "/a/sub/x.blob")) },
             { try Data("blob".utf8).write(to: URL(fileURLWithPath: self.root + "/a/sub/x.blob")) }, false),
            ("same length", { try Data("blub".utf8).write(to: URL(fileURLWithPath: self.root + "/a/sub/x.blob")) },
             { try Data("blob".utf8).write(to: URL(fileURLWithPath: self.root + "/a/sub/x.blob")) }, false),
            ("attribute", { try setAttribute("v2") }, { try setAttribute("v1") }, false),
            ("a new name", { try Data().write(to: URL(fileURLWithPath: self.root + "/b/y.blob")) },
             { try FileManager.default.removeItem(atPath: self.root + "/b/y.blob") }, false),
            ("a file for a folder", { XCTAssertEqual(rmdir(self.root + "/b"), 0); try Data().write(to: URL(fileURLWithPath: self.root + "/b")) },
             { try FileManager.default.removeItem(atPath: self.root + "/b"); XCTAssertEqual(mkdir(self.root + "/b", 0o700), 0) }, false),
            ("a json's mtime", { touch(self.root + "/a/x.json", seconds: 1_000_000) }, {}, false),
            ("a blob's mtime", { touch(self.root + "/a/sub/x.blob", seconds: 1_000_000) }, {}, true),
        ]
        var reference = base
        for (what, change, undo, same) in changes {
            try change()
            let changed = try FileTree.read(root, attributeNames: names).0
            XCTAssertEqual(reference.holdsTheSame(as: changed), same, what)
            XCTAssertEqual(changed.holdsTheSame(as: reference), same, what)
            XCTAssertEqual(reference.fingerprint == changed.fingerprint, same, "the fingerprint agrees: \(what)")
            try undo()
            reference = try FileTree.read(root, attributeNames: names).0
        }
    }
}
