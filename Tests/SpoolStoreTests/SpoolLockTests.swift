import Glibc
import SpoolStore
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
