import Foundation
import Glibc
@testable import SpoolSystem
import XCTest

/// A large folder listed on several threads at once (`SplitListing`): every name once, whatever
/// the ranges hold, and listed whole when the positions are not hash order.
final class SplitListingTests: XCTestCase {
    /// A folder as ext4 lists an indexed one: entries in the order of their positions, each with
    /// the position after it; a listing starts at the first entry at or past its position.
    struct HashOrderedFolder {
        /// (position, name), sorted by position; names may share a position (a hash collision).
        var entries: [(position: Int64, name: String)]
        static let end = Int64.max

        init(_ entries: [(Int64, String)]) {
            self.entries = entries.sorted { $0.0 < $1.0 }.map { (position: $0.0, name: $0.1) }
        }

        func list(from: Int64, _ body: (UnsafeRawBufferPointer, FileStatus.FileType, Int64) throws -> Bool) throws {
            let first = entries.firstIndex { $0.position >= from } ?? entries.count
            for index in first..<entries.count {
                let next = index + 1 < entries.count ? entries[index + 1].position : HashOrderedFolder.end
                let goOn = try Array(entries[index].name.utf8).withUnsafeBytes { try body($0, .regular, next) }
                if !goOn { return }
            }
        }
    }

    private func names(listing folder: HashOrderedFolder, parts: Int) throws -> [String]? {
        let states = try SplitListing.run(parts: parts, listing: folder.list, start: { [String]() }) { seen, name, _ in
            seen.append(String(decoding: name, as: UTF8.self))
        }
        return states.map { $0.flatMap { $0 } }
    }

    /// Names spread over the hash space, bunched in a few ranges, collided on one position,
    /// fewer than the ranges, or none: each name comes back exactly once, "." and ".." never.
    func testEveryNameOnce_whateverTheRangesHold() throws {
        let top = Int64.max
        var random = SystemRandomNumberGenerator()
        let spread = (0..<5_000).map { (Int64.random(in: 0..<top, using: &random), "spread-\($0)") }
        let bunched = (0..<300).map { (Int64.random(in: (top / 8 * 5)..<(top / 8 * 5 + 1_000), using: &random), "bunched-\($0)") }
        let collided = (0..<7).map { (top / 2, "collided-\($0)") } + [(top / 2 - 1, "before"), (top / 2 + 1, "after")]
        let onRangeStarts = (0..<8).map { (top / 8 * Int64($0), "start-\($0)") }
        let dots: [(Int64, String)] = [(0, "."), (1 << 32, "..")]
        let folders: [(String, [(Int64, String)])] = [
            ("spread", dots + spread), ("bunched", dots + bunched), ("collided", dots + collided),
            ("one name", dots + [(top / 3 * 2, "only")]), ("one name past every range start", [(top - 2, "last")]),
            ("on the ranges' starts", dots + onRangeStarts), ("empty", dots),
        ]
        for (label, entries) in folders {
            let folder = HashOrderedFolder(entries)
            let expected = entries.map(\.1).filter { $0 != "." && $0 != ".." }.sorted()
            for parts in [2, 3, 4, 7, 8] {
                let listed = try XCTUnwrap(try names(listing: folder, parts: parts), "\(label), \(parts) parts")
                let twice = Dictionary(grouping: listed) { $0 }.filter { $0.value.count > 1 }.keys.sorted()
                let missing = Set(expected).subtracting(listed).sorted()
                XCTAssertTrue(twice.isEmpty && missing.isEmpty && listed.count == expected.count,
                              "\(label), \(parts) parts: twice \(twice.prefix(5)), missing \(missing.prefix(5))")
            }
        }
    }

    /// Positions that go backwards within a range, or a range's first entry before its start, are
    /// not hash order: no states (the caller lists the folder whole).
    func testPositionsNotInHashOrder_areListedWhole() throws {
        // Every listing gives the same names from the start, whatever its position (as tmpfs
        // does after a seekdir far past its end).
        let ignoresPosition: SplitListing.PositionedListing = { _, body in
            for (index, name) in ["a", "b", "c"].enumerated() {
                guard try Array(name.utf8).withUnsafeBytes({ try body($0, .regular, Int64(index + 1)) }) else { return }
            }
        }
        XCTAssertNil(try SplitListing.run(parts: 2, listing: ignoresPosition, start: { 0 }) { count, _, _ in count += 1 })
        // Positions that go back within a listing.
        let backwards: SplitListing.PositionedListing = { _, body in
            for (next, name) in [(Int64(50), "a"), (Int64(40), "b")] {
                guard try Array(name.utf8).withUnsafeBytes({ try body($0, .regular, next) }) else { return }
            }
        }
        XCTAssertNil(try SplitListing.run(parts: 2, listing: backwards, start: { 0 }) { count, _, _ in count += 1 })
    }

    /// An error a range's body throws is the listing's.
    func testAnErrorOfOneRange_isThrown() {
        struct Refused: Error {}
        let folder = HashOrderedFolder((0..<100).map { (Int64.max / 100 * Int64($0), "n\($0)") })
        XCTAssertThrowsError(try SplitListing.run(parts: 4, listing: folder.list, start: { 0 }) { _, name, _ in
            if name.count == 3, name[1] == UInt8(ascii: "7"), name[2] == UInt8(ascii: "7") { throw Refused() }
        }) { XCTAssertTrue($0 is Refused, "\($0)") }
    }

    /// On the machine's own file system: a folder of 4,000 names, listed in 2 to 7 parts, gives
    /// every name once; where that file system is ext4, the folder was really split (one state a
    /// part), and a tmpfs folder never is.
    func testARealFolder_listedInParts_givesEveryNameOnce() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("split-\(UUID().uuidString)").path
        XCTAssertEqual(mkdir(path, 0o700), 0)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let names = Set((0..<4_000).map { "20261127T010203\(String(format: "%03d", $0 % 1000))Z-\($0)-an-item-name.a0.json" })
        for name in names { XCTAssertEqual(Glibc.close(Glibc.open(path + "/" + name, O_CREAT | O_WRONLY, 0o600)), 0) }
        let fd = FileDescriptor(rawValue: Glibc.open(path, O_RDONLY | O_DIRECTORY))
        defer { _ = Glibc.close(fd.rawValue) }
        let fs = PosixFileSystem()
        let ext4 = try fileSystemType(of: path) == "ef53"
        XCTAssertEqual(fs.listsInHashOrder(fd), ext4, "a folder of 4,000 names has its index flag on ext4")
        for parts in [2, 3, 7] {
            let states = try fs.forEachEntryInParts(fd, parts: parts, minimumFolderBytes: 0, start: { [String]() }) { seen, name, _ in
                seen.append(String(decoding: name, as: UTF8.self))
            }
            let listed = states.flatMap { $0 }
            XCTAssertEqual(listed.count, names.count, "\(parts) parts: no name twice")
            XCTAssertEqual(Set(listed), names, "\(parts) parts")
            XCTAssertEqual(states.count, ext4 ? parts : 1, "split only where the positions are hashes")
            if ext4 { XCTAssertTrue(states.allSatisfy { !$0.isEmpty }, "each part read some of 4,000 names") }
        }
        // Below the size limit, listed whole.
        XCTAssertEqual(try fs.forEachEntryInParts(fd, parts: 4, minimumFolderBytes: 1 << 40, start: { 0 }) { count, _, _ in count += 1 }, [4_000])
        // tmpfs: a seekdir far past its end gives every name again; never split there.
        let shm = "/dev/shm/spoold-split-\(UUID().uuidString)"
        if mkdir(shm, 0o700) == 0 {
            defer { try? FileManager.default.removeItem(atPath: shm) }
            for index in 0..<50 { _ = Glibc.close(Glibc.open("\(shm)/n\(index)", O_CREAT | O_WRONLY, 0o600)) }
            let shmFD = FileDescriptor(rawValue: Glibc.open(shm, O_RDONLY | O_DIRECTORY))
            defer { _ = Glibc.close(shmFD.rawValue) }
            XCTAssertFalse(fs.listsInHashOrder(shmFD))
            XCTAssertEqual(try fs.forEachEntryInParts(shmFD, parts: 4, minimumFolderBytes: 0, start: { 0 }) { count, _, _ in count += 1 }, [50])
        }
    }

    /// The file system's magic number in hex, as `stat -f` prints it ("ef53" for ext2/3/4).
    private func fileSystemType(of path: String) throws -> String {
        let stat = Process()
        stat.executableURL = URL(fileURLWithPath: "/usr/bin/stat")
        stat.arguments = ["-f", "-c", "%t", path]
        let out = Pipe()
        stat.standardOutput = out
        try stat.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        stat.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
