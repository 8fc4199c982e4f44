import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// `SPOOL/parts/aborts.log`: the AbortMultipartUpload requests spoold still owes the store.
final class AbortLogTests: StoreTestCase {
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-p")!
    let upload = PartLogCodec.State(size: 20 << 20, partSize: 5 << 20, region: "eu-west-1", uploadID: "u1", url: "http://h/b/k")
    let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    var path: String { temp.spoolPath + "/parts/" + AbortLog.fileName }

    private func owed(_ upload: String) -> OwedAbort { OwedAbort(id: id, region: "us-east-1", uploadID: upload, url: "http://h/b/k", since: now) }

    /// Giving up an upload records its abort, fsynced (and parts/, which the record made the log
    /// appear in), before the part log that named the upload is removed.
    func testGiveUp_recordsTheAbortDurably_beforeThePartLogGoes() throws {
        try spool.partLogs.log(for: id).begin(upload)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        let abort = try XCTUnwrap(try spool.partLogs.giveUp(id, now: now))

        XCTAssertEqual(abort, OwedAbort(id: id, region: "eu-west-1", uploadID: "u1", url: "http://h/b/k", since: now))
        let calls = fs.calls.filter { [.write, .sync, .remove].contains($0.operation) }.map(\.description)
        XCTAssertEqual(calls, [
            "write parts/\(AbortLog.fileName)", "sync parts/\(AbortLog.fileName)", "sync <root>/parts (dir)",
            "remove parts/\(id).log",
        ])
        let reopened = try temp.open()
        XCTAssertEqual(reopened.partLogs.aborts.owed, [abort])
        XCTAssertNil(spool.partLogs.state(of: id))
    }

    func testGiveUp_withoutALog_owesNothing() throws {
        XCTAssertNil(try spool.partLogs.giveUp(id, now: now))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// A confirmation is appended unsynced: lost, it only costs the abort sent again.
    func testConfirmation_isNotSynced_andEndsTheDebt() throws {
        try spool.partLogs.aborts.owe([owed("u1"), owed("u2")])
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        try spool.partLogs.aborts.confirmed("u1")
        XCTAssertEqual(fs.calls(.sync).count, 0)
        XCTAssertEqual(spool.partLogs.aborts.owed.map(\.uploadID), ["u2"])
    }

    /// A record appended after a torn tail (a crash mid-append, by any of the processes that
    /// append) starts on a new line, so it is read.
    func testAfterATornTail_theNextRecordStartsANewLine() throws {
        try spool.partLogs.aborts.owe([owed("u1")])
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("R 60 0badc0de abort 17".utf8))
        handle.closeFile()
        try spool.partLogs.aborts.owe([owed("u2")])
        XCTAssertEqual(spool.partLogs.aborts.owed.map(\.uploadID), ["u1", "u2"])
    }

    /// Recovery removes the log once nothing is owed, and otherwise keeps only what is owed
    /// (staged in tmp/, renamed in); a damaged log is left for the operator to read.
    func testTidy_removesAPaidLog_compactsAnOwingOne_leavesADamagedOne() throws {
        let aborts = spool.partLogs.aborts
        try aborts.owe([owed("u1"), owed("u2")])
        try aborts.confirmed("u1")
        var tidy = try aborts.tidy(tmp: spool.descriptor(.tmp))
        XCTAssertEqual(tidy, AbortLog.Tidy(owed: 1, dropped: 1, damagedLines: 0))
        XCTAssertEqual(aborts.scan().confirmed, 0, "compacted")
        XCTAssertEqual(aborts.owed.map(\.uploadID), ["u2"])
        XCTAssertEqual(try spool.list(.tmp).filter { $0.name != "." && $0.name != ".." }.count, 0, "nothing left staged")

        try aborts.confirmed("u2")
        tidy = try aborts.tidy(tmp: spool.descriptor(.tmp))
        XCTAssertEqual(tidy, AbortLog.Tidy(owed: 0, dropped: 1, damagedLines: 0))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))

        try aborts.owe([owed("u3")])
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("R 9 00000000 something\n".utf8))
        handle.closeFile()
        try aborts.confirmed("u3")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        tidy = try aborts.tidy(tmp: spool.descriptor(.tmp))
        XCTAssertEqual(tidy, AbortLog.Tidy(owed: 0, dropped: 0, damagedLines: 1))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "left as it was")
    }

    /// Start-up recovery keeps the aborts log (it is no item's part log) and reports what is owed.
    func testRecovery_keepsTheAbortsLog_andHandsOverWhatIsOwed() throws {
        try spool.partLogs.aborts.owe([owed("u9")])
        let now = self.now
        let outcome = try SpoolRecovery.run(spool: spool, policy: RetryPolicy(), now: now, log: EventLog(minimumLevel: .error) { now })
        XCTAssertEqual(outcome.owedAborts.map(\.uploadID), ["u9"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temp.spoolPath).filter { $0 == "corrupt" }, [])
    }
}
