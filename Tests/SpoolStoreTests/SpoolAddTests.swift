import Glibc
import SpoolCore
@testable import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

final class SpoolAddTests: StoreTestCase {
    /// Pseudo-random bytes, written straight into the array (a debug `map` took ~0.3 s per MiB).
    private func bytes(_ count: Int, seed: UInt32 = 1) -> [UInt8] {
        var x = seed
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for i in 0..<count {
                x = x &* 1_664_525 &+ 1_013_904_223
                buffer[i] = UInt8(truncatingIfNeeded: x &>> 24)
            }
            initialized = count
        }
    }

    private func addOne(_ spool: Spool, _ item: NewItem) throws -> ItemID {
        let results = try spool.add([item])
        guard case .added(let id) = results.first else {
            XCTFail("not added: \(results)")
            throw XCTSkip("item was not added")
        }
        return id
    }

    private func blobName(_ id: ItemID) -> String { "\(id).a0.blob" }
    private func jsonName(_ id: ItemID) -> String { "\(id).a0.json" }

    func testOpen_createsTheLayout() throws {
        _ = try temp.open()
        XCTAssertEqual(Set(temp.rootNames()), Set(SpoolFolder.allCases.map(\.rawValue)))
    }

    func testAddFromIncoming_renamesTheBlobIn_keepingItsInode() throws {
        let spool = try temp.open()
        let content = bytes(1000)
        let source = try temp.write(content, to: "photo.jpg", in: .incoming)
        let before = try XCTUnwrap(TemporarySpool.inode(of: source))
        let id = try addOne(spool, items.incoming("photo.jpg"))
        XCTAssertEqual(temp.names(in: .pending), [blobName(id), jsonName(id)])
        XCTAssertEqual(temp.names(in: .incoming), [])
        XCTAssertEqual(temp.names(in: .tmp), [])
        XCTAssertEqual(TemporarySpool.inode(of: temp.path(.pending, blobName(id)))?.inode, before.inode, "copied, not renamed")
        XCTAssertEqual(try temp.read(.pending, blobName(id)), content)
        let metadata = try spool.readMetadata(id, at: ItemLocation(.pending, attempt: 0))
        XCTAssertEqual(metadata.size, 1000)
        XCTAssertEqual(metadata.originalName, "photo.jpg")
        XCTAssertEqual(metadata.id, id.rawValue)
    }

    func testAddFromIncoming_emptyAndThreeMebibyteFiles_arriveByteForByte() throws {
        let spool = try temp.open()
        for (name, content) in [("empty", [UInt8]()), ("big.bin", bytes(3 << 20, seed: 9))] {
            try temp.write(content, to: name, in: .incoming)
            let id = try addOne(spool, items.incoming(name))
            XCTAssertEqual(try temp.read(.pending, blobName(id)), content, name)
            XCTAssertEqual(try spool.readMetadata(id, at: ItemLocation(.pending, attempt: 0)).size, Int64(content.count))
        }
    }

    func testAddExternal_copies_andLeavesTheSource() throws {
        let spool = try temp.open()
        for content in [[UInt8](), bytes(3 << 20, seed: 3)] {
            let source = try temp.write(content, atPath: temp.directory + "/outside-\(content.count).bin")
            let id = try addOne(spool, items.external(source, move: false))
            XCTAssertEqual(try temp.read(.pending, blobName(id)), content)
            XCTAssertNotEqual(TemporarySpool.inode(of: temp.path(.pending, blobName(id)))?.inode, TemporarySpool.inode(of: source)?.inode)
            XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: source))), content, "source untouched")
        }
        XCTAssertEqual(temp.names(in: .tmp), [])
    }

    func testAddExternal_withMove_renames() throws {
        let spool = try temp.open()
        let content = bytes(4096, seed: 5)
        let source = try temp.write(content, atPath: temp.directory + "/outside.bin")
        let inode = try XCTUnwrap(TemporarySpool.inode(of: source)).inode
        let id = try addOne(spool, items.external(source, move: true))
        XCTAssertNil(TemporarySpool.inode(of: source), "source still there")
        XCTAssertEqual(TemporarySpool.inode(of: temp.path(.pending, blobName(id)))?.inode, inode)
        XCTAssertEqual(try temp.read(.pending, blobName(id)), content)
    }

    func testAddExternal_missingFile_isRejected() throws {
        let spool = try temp.open()
        let results = try spool.add([items.external(temp.directory + "/nope", move: false)])
        guard case .rejected(let reason) = results.first else { return XCTFail("\(results)") }
        XCTAssertTrue(reason.contains("nope"), reason)
    }

    func testSymlinkFifoAndFolderInIncoming_areRejectedAndLeftInPlace() throws {
        let spool = try temp.open()
        let secret = try temp.write(Array("secret".utf8), atPath: temp.directory + "/secret")
        XCTAssertEqual(symlink(secret, temp.path(.incoming, "link")), 0)
        XCTAssertEqual(mkfifo(temp.path(.incoming, "fifo"), 0o600), 0)
        XCTAssertEqual(mkdir(temp.path(.incoming, "folder"), 0o700), 0)
        try temp.write(Array("ok".utf8), to: "good", in: .incoming)
        let batch = ["link", "fifo", "folder", "good"].map { items.incoming($0) }
        let results = try spool.add(batch)
        for (i, name) in ["link", "fifo", "folder"].enumerated() {
            guard case .rejected(let reason) = results[i] else { XCTFail("\(name): \(results[i])"); continue }
            XCTAssertTrue(reason.contains(name), reason)
        }
        XCTAssertEqual(results[3], .added(batch[3].id))
        XCTAssertEqual(temp.names(in: .incoming), ["fifo", "folder", "link"])
        XCTAssertEqual(temp.names(in: .pending), [blobName(batch[3].id), jsonName(batch[3].id)])
        XCTAssertEqual(temp.names(in: .tmp), [])
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: secret))), Array("secret".utf8))
    }

    func testHardLinkedFile_isRefusedByDefault_leftAlone() throws {
        let spool = try temp.open()
        let source = try temp.write([1, 2, 3], to: "shared", in: .incoming)
        XCTAssertEqual(link(source, temp.directory + "/other-link"), 0)
        let results = try spool.add([items.incoming("shared")])
        guard case .rejected(let reason) = results.first else { return XCTFail("\(results)") }
        XCTAssertTrue(reason.contains("incoming/shared has 2 hard links"), reason)
        XCTAssertTrue(reason.contains("--allow-hardlinks"), reason)
        XCTAssertEqual(temp.names(in: .incoming), ["shared"], "left where it was")
        XCTAssertEqual(temp.names(in: .pending), [])
        XCTAssertEqual(temp.names(in: .tmp), [])
    }

    func testHardLinkedFile_allowed_isCopiedNotRenamed() throws {
        let spool = try temp.open()
        spool.takesHardLinkedFiles = true
        let content = bytes(10_000, seed: 11)
        let source = try temp.write(content, to: "shared", in: .incoming)
        let otherLink = temp.directory + "/other-link"
        XCTAssertEqual(link(source, otherLink), 0)
        let inode = try XCTUnwrap(TemporarySpool.inode(of: source))
        XCTAssertEqual(inode.links, 2)
        let id = try addOne(spool, items.incoming("shared"))
        let spooled = try XCTUnwrap(TemporarySpool.inode(of: temp.path(.pending, blobName(id))))
        XCTAssertNotEqual(spooled.inode, inode.inode, "a file with two links must be copied")
        XCTAssertEqual(spooled.links, 1)
        XCTAssertEqual(try temp.read(.pending, blobName(id)), content)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: otherLink))), content, "the other link keeps its data")
        XCTAssertEqual(temp.names(in: .tmp), [])
    }

    func testNewItemInFailedState_landsInFailed() throws {
        let spool = try temp.open()
        try temp.write([1, 2, 3], to: "bad", in: .incoming)
        let id = try addOne(spool, items.incoming("bad", state: .failed))
        XCTAssertEqual(temp.names(in: .failed), [blobName(id), jsonName(id)])
        XCTAssertEqual(temp.names(in: .pending), [])
    }

    func testAdd_recordsTheItemInTheIndex() throws {
        let spool = try temp.open()
        try temp.write([1], to: "a", in: .incoming)
        let id = try addOne(spool, items.incoming("a"))
        let (last, _) = try IndexFile(root: spool.root, fs: spool.fs).openAndRecover(now: Timestamp(millisecondsSinceEpoch: 0))
        XCTAssertEqual(last[id], IndexRecord(.add, id, from: nil, to: ItemLocation(.pending, attempt: 0)))
    }
}
