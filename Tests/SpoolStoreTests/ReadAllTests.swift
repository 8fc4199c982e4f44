import Foundation
import SpoolSystem
import XCTest

/// `FileSystem.readAll`: the whole file up to its limit, whatever size hint it was given.
final class ReadAllTests: XCTestCase {
    private func read(_ size: Int, hint: Int64?, limit: Int) throws -> [UInt8]? {
        let path = NSTemporaryDirectory() + "spoold-readall-\(getpid())-\(UUID().uuidString)"
        defer { unlink(path) }
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let fs = PosixFileSystem()
        let fd = try fs.open(path, relativeTo: nil, flags: [.readOnly], mode: 0)
        let read = try fs.closing(fd) { try fs.readAll($0, limit: limit, sizeHint: hint) }
        if let read { XCTAssertEqual(read, bytes, "size \(size), hint \(String(describing: hint))") }
        return read
    }

    func testReadAll_readsToTheEnd_whateverTheHint() throws {
        for size in [0, 1, 285, 65_535, 65_536, 65_537, 200_000] {
            for hint in [nil, 0, Int64(size) / 2, Int64(size), Int64(size) + 10, -1, Int64.max] as [Int64?] {
                XCTAssertNotNil(try read(size, hint: hint, limit: 1 << 20), "size \(size), hint \(String(describing: hint))")
            }
        }
    }

    func testReadAll_refusesMoreThanTheLimit() throws {
        XCTAssertNil(try read(286, hint: 285, limit: 285))
        XCTAssertNil(try read(70_000, hint: 10, limit: 65_536))
        XCTAssertNotNil(try read(285, hint: 285, limit: 285))
    }
}
