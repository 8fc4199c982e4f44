import Foundation
import Glibc
@testable import SpoolSystem
import XCTest

/// The typed errno and the calls SpoolSystem makes on descriptors outside the spool's seam.
final class SystemCallTests: XCTestCase {
    func testSystemError_namesTheCallAndTheErrno_andASyncFailureIsTypedNotSpelled() {
        let full = SystemError(.write, path: "tmp/x.json", errno: .noSpace)
        XCTAssertEqual(full.description, "write tmp/x.json: No space left on device (ENOSPC)")
        XCTAssertTrue(full.isOutOfSpace)
        XCTAssertFalse(full.isSyncFailure)
        XCTAssertTrue(SystemError(.fsync, path: "pending", errno: .noSpace).isSyncFailure, "an fsync failure is final whatever its errno")
        XCTAssertTrue(SystemError(.syncfs, path: "spool", errno: .ioError).isSyncFailure)
        XCTAssertEqual(Errno(rawValue: ENOENT), .noSuchFileOrDirectory)
    }

    /// Two listings of one folder at once (a pass over pending/ on its thread while a count
    /// lists it on another) each see every name: a listing does not share its position with
    /// the descriptor it was given or with another listing.
    func testTwoListingsOfOneFolderAtOnce_eachSeeEveryName() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("listing-\(UUID().uuidString)").path
        XCTAssertEqual(mkdir(path, 0o700), 0)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let names = Set((0..<3000).map { "item-\($0)-with-a-name-long-enough-to-fill-a-few-blocks.json" })
        for name in names { XCTAssertEqual(Glibc.close(Glibc.open(path + "/" + name, O_CREAT | O_WRONLY, 0o600)), 0) }
        let fd = FileDescriptor(rawValue: Glibc.open(path, O_RDONLY | O_DIRECTORY))
        defer { _ = Glibc.close(fd.rawValue) }
        let fs = PosixFileSystem()
        var outer = Set<String>()
        var inner: [Set<String>] = []
        try fs.forEachEntry(fd) { name, _ in
            outer.insert(String(decoding: name, as: UTF8.self))
            if outer.count % 1000 == 1 {
                var seen = Set<String>()
                try fs.forEachEntry(fd) { name, _ in
                    seen.insert(String(decoding: name, as: UTF8.self))
                    return true
                }
                inner.append(seen)
            }
            return true
        }
        XCTAssertEqual(outer, names)
        XCTAssertEqual(inner.count, 3)
        for seen in inner { XCTAssertEqual(seen, names) }
    }

    /// The one loop for short writes: a writer that takes 3 bytes a call gets every byte, in
    /// order; one that takes none fails with EIO instead of spinning.
    /// The recycle's line travels in a memory-only file: the next image reads back exactly what
    /// was written, and takes no descriptor that is not such a file of that name (an inherited
    /// number may name a supervisor's pipe or a file), nor one larger than its limit.
    func testHandedFile_readsBackWhatWasHandedOver_andTakesNoOtherDescriptor() throws {
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let fd = try ProcessImage.handOverFile(named: "spoold-test-line", bytes: bytes)
        XCTAssertNil(ProcessImage.takeHandedFile(fd, named: "spoold-other", limit: 1 << 20), "another name")
        XCTAssertGreaterThanOrEqual(fcntl(fd, F_GETFD), 0, "left open")
        let taken = ProcessImage.takeHandedFile(fd, named: "spoold-test-line", limit: 1 << 20)
        XCTAssertTrue(taken == .read(bytes), "every byte, in order")
        XCTAssertEqual(fcntl(fd, F_GETFD), -1, "closed once taken")
        let large = try ProcessImage.handOverFile(named: "spoold-test-line", bytes: bytes)
        XCTAssertTrue(ProcessImage.takeHandedFile(large, named: "spoold-test-line", limit: 100_000) == .unreadable, "over the limit")
        XCTAssertEqual(fcntl(large, F_GETFD), -1, "taken, and closed")

        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer { ends.forEach { _ = close($0) } }
        XCTAssertNil(ProcessImage.takeHandedFile(ends[0], named: "spoold-test-line", limit: 1 << 20), "a pipe")
        XCTAssertGreaterThanOrEqual(fcntl(ends[0], F_GETFD), 0, "left open")
        let file = open("/proc/self/exe", O_RDONLY)
        defer { close(file) }
        XCTAssertNil(ProcessImage.takeHandedFile(file, named: "spoold-test-line", limit: 1 << 30), "a file on disk")
        XCTAssertGreaterThanOrEqual(fcntl(file, F_GETFD), 0, "left open")
    }

    /// A recycle hands the inotify instance on: adopted, it keeps its watches (watching the same
    /// folder again gives the same watch) and the events queued before; any other descriptor is
    /// refused and left alone.
    func testInotifyAdopted_keepsItsWatchesAndQueuedEvents_andNothingElseIsTaken() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-inotify-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let directory = FileDescriptor(rawValue: open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        defer { close(directory.rawValue) }
        let last = try InotifyWatcher()
        let watch = try last.watch(directory, label: "folder")
        XCTAssertTrue(FileManager.default.createFile(atPath: folder + ".file", contents: Data("x".utf8)))
        XCTAssertEqual(rename(folder + ".file", folder + "/moved-in"), 0)
        let handed = dup(last.fd)
        let adopted = try XCTUnwrap(InotifyWatcher(adopting: handed))
        XCTAssertEqual(try adopted.watch(directory, label: "folder"), watch, "the same watch")
        XCTAssertEqual(adopted.readEvents().map(\.name), ["moved-in"], "what was queued before")
        XCTAssertTrue(ProcessImage.isInotify(adopted.fd))
        XCTAssertNotEqual(fcntl(adopted.fd, F_GETFD) & FD_CLOEXEC, 0, "closed on the next exec unless handed on again")

        let file = open(folder + "/moved-in", O_RDONLY | O_CLOEXEC)
        defer { close(file) }
        XCTAssertNil(InotifyWatcher(adopting: file), "a file")
        XCTAssertNil(InotifyWatcher(adopting: 1), "standard output")
        XCTAssertNotEqual(fcntl(file, F_GETFD), -1, "left open")
    }

    func testWriteLoop_continuesShortWrites_andAWriteOfNothingIsAnError() throws {
        let bytes = Array(0..<100).map(UInt8.init)
        var written: [UInt8] = []
        try bytes.withUnsafeBytes { buffer in
            try WriteLoop.writeAll(buffer, label: "test") { part in
                let n = min(3, part.count)
                written.append(contentsOf: part.prefix(n))
                return n
            }
        }
        XCTAssertEqual(written, bytes)
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try WriteLoop.writeAll($0, label: "test") { _ in 0 } }) {
            XCTAssertEqual(($0 as? SystemError)?.errno, .ioError)
        }
    }

    /// A write larger than a pipe's buffer arrives whole while the reader drains it.
    func testWriteAll_toAPipe_everyByteArrivesInOrder() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let ends = fds
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let reader = DispatchQueue(label: "reader")
        let received = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var read: [UInt8] = []
        reader.async {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = Glibc.read(ends[0], &buffer, buffer.count)
                if n <= 0 { break }
                read.append(contentsOf: buffer[0..<n])
            }
            received.signal()
        }
        try bytes.withUnsafeBytes { try FileDescriptor(rawValue: ends[1]).writeAll($0) }
        FileDescriptor(rawValue: ends[1]).close()
        received.wait()
        FileDescriptor(rawValue: ends[0]).close()
        XCTAssertEqual(read, bytes)
    }

    func testWriteAll_aClosedDescriptor_throwsTheTypedErrno() {
        XCTAssertThrowsError(try [UInt8](repeating: 1, count: 8).withUnsafeBytes { try FileDescriptor(rawValue: -1).writeAll($0) }) {
            XCTAssertEqual(($0 as? SystemError)?.errno, .badFileDescriptor)
            XCTAssertEqual(($0 as? SystemError)?.call, .write)
        }
    }

    func testPread_readsAtAnOffset_andZeroAtTheEnd() throws {
        let path = NSTemporaryDirectory() + "/spoold-pread-\(getpid())"
        _ = FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3, 4, 5]))
        defer { unlink(path) }
        let fd = FileDescriptor(rawValue: open(path, O_RDONLY))
        defer { fd.close() }
        var buffer = [UInt8](repeating: 0, count: 8)
        let n = try buffer.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 3, into: $0) }
        XCTAssertEqual(Array(buffer[0..<n]), [4, 5])
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 5, into: $0) }, 0)
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: -1).read(fromAbsoluteOffset: 0, into: $0) }) {
            XCTAssertEqual(($0 as? SystemError)?.errno, .badFileDescriptor)
        }
    }
}
