import Glibc
import SpoolCore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// The engine's rule for files found by a scan when the kernel will not answer the lease
/// question (another user's file without CAP_LEASE): size and mtime unchanged across two looks
/// `--settle` apart. The refusal is injected, as the test runs as the files' owner.
final class SettleFallbackTests: EngineTestCase {
    func testScan_leaseRefused_takesAnOldFileAfterTwoUnchangedLooksSettleApart() throws {
        try drop("old.txt", age: 60)
        fs.writerCheckAnswer = .unknown(errno: .permissionDenied)
        let embedded = try start(configuration(settle: 2))

        try embedded.advanceTime(to: 1.999)
        XCTAssertEqual(embedded.transport.started.count, 0)
        try embedded.advanceTime(to: 2)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [2], "taken at the second look")
        XCTAssertEqual(fs.calls(.writerCheck).count, 2, "looked at twice")
    }

    func testScan_leaseRefused_aFileThatGrewBetweenLooks_waitsAnotherSettle() throws {
        try drop("growing.txt", age: 60)
        fs.writerCheckAnswer = .unknown(errno: .permissionDenied)
        let embedded = try start(configuration(settle: 2))

        try embedded.advanceTime(to: 1)
        try temp.write(Array("a paused writer wrote more, keeping the old mtime".utf8), to: "growing.txt", in: .incoming)
        try setModificationTime(of: "growing.txt", age: 61)
        try embedded.advanceTime(to: 3.999)
        XCTAssertEqual(embedded.transport.started.count, 0, "the size changed at the look at 2 s: a new look is due at 4 s")
        try embedded.advanceTime(to: 4)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [4])
    }

    func testScan_leaseRefused_aFreshFile_waitsUntilItsMtimeIsSettleOld_thenTwoUnchangedLooks() throws {
        try drop("fresh.txt", age: 0)
        fs.writerCheckAnswer = .unknown(errno: .permissionDenied)
        let embedded = try start(configuration(settle: 2))

        try embedded.advanceTime(to: 3.999)
        XCTAssertEqual(embedded.transport.started.count, 0, "first look at 2 s (mtime --settle old), second --settle later")
        try embedded.advanceTime(to: 4)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [4])
    }

    func testScan_leaseGranted_takesAnOldFileAtTheFirstLook() throws {
        try drop("old.txt", age: 60)
        let embedded = try start(configuration(settle: 5))
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [0], "no second look")
        XCTAssertEqual(fs.calls(.writerCheck).count, 1)
    }
}
