import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// `SPOOL/parts/<id>.log`: the durable progress of a multipart upload.
final class PartLogTests: StoreTestCase {
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-p")!
    let upload = PartLogCodec.State(size: 20 << 20, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: "http://h/b/k")

    func testBeginAndRecord_areReadBackByANewLog() throws {
        let log = spool.partLogs.log(for: id)
        XCTAssertNil(log.load())
        try log.begin(upload)
        try log.record(part: 2, etag: "\"b\"")
        try log.record(part: 1, etag: "\"a\"")
        var expected = upload
        expected.parts = [1: "\"a\"", 2: "\"b\""]
        let reopened = try temp.open()  // the log lives as long as its spool
        XCTAssertEqual(reopened.partLogs.log(for: id).load(), .s3(expected))
        XCTAssertEqual(spool.partLogs.state(of: id)?.parts.count, 2)

        try log.begin(upload)  // a new upload replaces the old log
        XCTAssertEqual(spool.partLogs.state(of: id), upload)
        log.discard()
        XCTAssertNil(spool.partLogs.state(of: id))
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp.spoolPath + "/parts/\(id).log"))
    }

    /// The upload id is durable before the first part is sent, and each part before it counts:
    /// the file is fsynced after each write, and the folder after the file is created.
    func testEveryRecord_isFsyncedBeforeItCounts() throws {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        let log = spool.partLogs.log(for: id)
        try log.begin(upload)
        try log.record(part: 1, etag: "e")
        let calls = fs.calls.filter { [.write, .sync].contains($0.operation) }.map(\.description)
        XCTAssertEqual(calls, [
            "sync <root> (dir)",  // parts/ made
            "write parts/\(id).log", "sync parts/\(id).log", "sync <root>/parts (dir)",
            "write parts/\(id).log", "sync parts/\(id).log",
        ])
    }

    /// A crash mid-append leaves a torn tail: it is ignored, and truncated before the next record
    /// so that record is not lost behind it.
    func testTornTail_isTruncatedBeforeTheNextAppend() throws {
        let log = spool.partLogs.log(for: id)
        try log.begin(upload)
        try log.record(part: 1, etag: "a")
        let path = temp.spoolPath + "/parts/\(id).log"
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("R 17 0badc0de part 2".utf8))
        handle.closeFile()

        let reopened = try temp.open()
        let again = reopened.partLogs.log(for: id)
        XCTAssertEqual(again.load()?.s3?.parts, [1: "a"])
        try again.record(part: 3, etag: "c")
        XCTAssertEqual(spool.partLogs.state(of: id)?.parts, [1: "a", 3: "c"])
    }

    func testALogThatDoesNotParse_isSetAside_notTrusted() throws {
        try FileManager.default.createDirectory(atPath: temp.spoolPath + "/parts", withIntermediateDirectories: true)
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: temp.spoolPath + "/parts/\(id).log"))
        XCTAssertNil(spool.partLogs.log(for: id).load())
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp.spoolPath + "/parts/\(id).log"))
        let aside = try FileManager.default.contentsOfDirectory(atPath: temp.spoolPath + "/corrupt")
        XCTAssertEqual(aside.count, 1)
        XCTAssertTrue(aside[0].hasPrefix("parts.\(id).log."), "\(aside)")
    }

    /// A crash while the first record was written leaves a partial line (or nothing): the upload
    /// id never counted, so the file is simply removed.
    func testATornFirstRecord_isRemoved() throws {
        try FileManager.default.createDirectory(atPath: temp.spoolPath + "/parts", withIntermediateDirectories: true)
        for torn in ["", "R 87 ad48e2b9 upload 1782"] {
            try Data(torn.utf8).write(to: URL(fileURLWithPath: temp.spoolPath + "/parts/\(id).log"))
            XCTAssertNil(spool.partLogs.log(for: id).load())
            XCTAssertFalse(FileManager.default.fileExists(atPath: temp.spoolPath + "/parts/\(id).log"))
            XCTAssertFalse(FileManager.default.fileExists(atPath: temp.spoolPath + "/corrupt"), "'\(torn)' is a crash's trace, not damage")
        }
    }

    func testRecovery_removesLogsOfItemsThatAreGone_andSetsAsideStrangers() throws {
        let other = ItemID("20261121T141003123Z-0000-9f3ab2c1-q")!
        try spool.partLogs.log(for: id).begin(upload)
        try spool.partLogs.log(for: other).begin(upload)
        _ = FileManager.default.createFile(atPath: temp.spoolPath + "/parts/notes.txt", contents: Data("x".utf8))

        XCTAssertEqual(spool.partLogs.removeLogs(keeping: [id]), 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temp.spoolPath + "/parts"), ["\(id).log"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temp.spoolPath + "/corrupt").count, 1)
    }

    /// A failed fsync is the spool failing (the engine stops), never a
    /// refusal; an ETag the log cannot hold is a refusal, and nothing was written.
    func testFailedFsync_throwsTheSystemError_whileAnOverlongETag_isARefusal() throws {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let log = spool.partLogs.log(for: id)
        try log.begin(upload)
        let name = "\(id).log"
        fs.failCall(.sync, errno: EIO) { $0.name == name }
        XCTAssertThrowsError(try log.record(part: 1, etag: "e")) { error in
            XCTAssertFalse(error is PartJournalRefusal)
            XCTAssertEqual((error as? SystemError)?.errno, .ioError)
        }
        let writes = fs.calls(.write).count
        XCTAssertThrowsError(try log.record(part: 2, etag: String(repeating: "e", count: 1 << 16))) { error in
            XCTAssertTrue(error is PartJournalRefusal, "\(error)")
        }
        XCTAssertEqual(fs.calls(.write).count, writes, "a refused record writes nothing")
    }
}
