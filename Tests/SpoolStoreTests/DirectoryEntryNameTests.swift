import Glibc
import SpoolSystem
import XCTest

/// `readdir` entries are packed by `d_reclen`: a name is read up to its NUL, never as the whole
/// `d_name[256]`, which runs past an entry that ends at the end of readable memory.
final class DirectoryEntryNameTests: XCTestCase {
    /// An entry whose name ends right before a page that may not be read (as the last entry of
    /// a `readdir` buffer can end at its end): reading it must not touch that page. Copying
    /// `entry.pointee.d_name` did, and the process died with SIGSEGV.
    func testName_ofAnEntryEndingAtUnreadableMemory_isReadUpToItsNUL() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let memory = try XCTUnwrap(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        XCTAssertNotEqual(memory, MAP_FAILED)
        defer { munmap(memory, 2 * page) }
        XCTAssertEqual(mprotect(memory + page, page, PROT_NONE), 0)
        let name = Array("20261123T100000000Z-0000-00000001-a.txt.a0.json".utf8)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        // The entry's header, then its name and NUL as the last bytes before the guard page.
        let entry = memory + page - (nameOffset + name.count + 1)
        memset(entry, 0, nameOffset)
        name.withUnsafeBytes { (entry + nameOffset).copyMemory(from: $0.baseAddress!, byteCount: name.count) }
        (entry + nameOffset + name.count).storeBytes(of: 0, as: UInt8.self)

        let read = DirectoryEntryName.bytes(of: entry.assumingMemoryBound(to: dirent.self))

        XCTAssertEqual(Array(read), name)
        XCTAssertEqual(DirectoryEntryName.text(of: entry.assumingMemoryBound(to: dirent.self)), String(decoding: name, as: UTF8.self))
    }

    /// The same names `ls` sees, through the file system's listing.
    func testListing_returnsEveryName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-dirent-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let names = (1...300).map { "f\(String(repeating: "x", count: $0 % 200))-\($0)" }
        for name in names { XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/" + name, contents: nil)) }
        let fs = PosixFileSystem()
        let fd = try fs.open(folder, relativeTo: nil, flags: [.directory], mode: 0)
        defer { fs.close(fd) }
        XCTAssertEqual(Set(try fs.list(fd).map(\.name)), Set(names))
    }
}
