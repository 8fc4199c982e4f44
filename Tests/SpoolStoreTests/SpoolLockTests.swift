import Glibc
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

final class SpoolLockTests: XCTestCase {
    func testSecondLock_throwsAlreadyRunningWithThePid_andHolderReportsIt() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let spool = try temp.open()
        let other = try temp.open()
        XCTAssertNil(SpoolLock.holder(of: spool))
        var lock: SpoolLock? = try SpoolLock(spool: spool)
        XCTAssertNotNil(lock)
        let pid = String(getpid())
        XCTAssertThrowsError(try SpoolLock(spool: other)) { error in
            XCTAssertEqual(error as? SpoolError, .alreadyRunning(path: other.path, pid: pid))
            XCTAssertTrue("\(error)".contains("pid \(pid)"), "\(error)")
        }
        XCTAssertEqual(SpoolLock.holder(of: other), pid)
        lock = nil
        XCTAssertNil(SpoolLock.holder(of: other))
        XCTAssertNoThrow(try SpoolLock(spool: other))
    }
}

/// The descriptor a recycling daemon passes to its next image.
final class SpoolLockInheritanceTests: XCTestCase {
    func testInheritedDescriptorOfThisSpoolsLock_isAdoptedWithoutEverUnlocking() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let spool = try temp.open()
        let first = try SpoolLock(spool: spool)
        // A duplicate shares the open file and its flock, as a descriptor kept across execve does.
        let copy = FileDescriptor(rawValue: dup(first.descriptor.rawValue))
        let adopted = try SpoolLock(spool: try temp.open(), inherited: copy)
        XCTAssertEqual(adopted.descriptor, copy)
        XCTAssertThrowsError(try SpoolLock(spool: try temp.open())) { error in
            guard case .alreadyRunning = error as? SpoolError else { return XCTFail("\(error)") }
        }
        // Close-on-exec again: only a recycle clears it, right before execve.
        XCTAssertNotEqual(fcntl(adopted.descriptor.rawValue, F_GETFD) & FD_CLOEXEC, 0)
        withExtendedLifetime(first) {}
    }

    func testInheritedDescriptorOfAnotherFile_isIgnored_andTheLockIsTakenNormally() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let spool = try temp.open()
        let other = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(other) }
        let lock = try SpoolLock(spool: spool, inherited: FileDescriptor(rawValue: other))
        XCTAssertNotEqual(lock.descriptor.rawValue, other)
        XCTAssertEqual(SpoolLock.holder(of: try temp.open()), String(getpid()))
    }
}
