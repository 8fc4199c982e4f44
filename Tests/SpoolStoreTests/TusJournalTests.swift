import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A tus upload's URL as item state: `SPOOL/parts/<id>.log` with a `tus` record, its termination
/// owed in `parts/aborts.log` when it is given up.
final class TusJournalTests: StoreTestCase {
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-t")!
    let record = TusUploadRecord(size: 200 << 20, uploadURL: "http://127.0.0.1:1080/files/ab cd", endpoint: "http://127.0.0.1:1080/files/")

    func testBegin_isReadBack_withTheLastOffsetNoted_andTheS3ReaderSeesNoUpload() throws {
        let log = spool.partLogs.log(for: id)
        XCTAssertNil(log.load())
        try log.begin(record)
        log.recordOffset(16 << 20)
        log.recordOffset(32 << 20)
        let reopened = try temp.open()
        let loaded = reopened.partLogs.log(for: id).load()?.tus
        XCTAssertEqual(loaded?.record, record)
        XCTAssertEqual(loaded?.offset, 32 << 20)
        XCTAssertEqual(spool.partLogs.tusState(of: id)?.offset, 32 << 20, "what ls and show read")
        XCTAssertNil(spool.partLogs.state(of: id), "not an S3 multipart upload")
        let text = try String(contentsOfFile: temp.spoolPath + "/parts/\(id).log", encoding: .utf8)
        XCTAssertTrue(text.contains(" tus 209715200 http://127.0.0.1:1080/files/ab%20cd http://127.0.0.1:1080/files/\n"), text)
        XCTAssertTrue(text.contains(" offset 33554432\n"), text)
    }

    /// The upload URL is durable before anything is sent to it: the file and its folder fsynced.
    /// The offsets are notes, never synced.
    func testTheUploadURL_isFsyncedBeforeItCounts_theOffsetsAreNot() throws {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        let log = spool.partLogs.log(for: id)
        try log.begin(record)
        log.recordOffset(1)
        let calls = fs.calls.filter { [.write, .sync].contains($0.operation) }.map(\.description)
        XCTAssertEqual(calls, [
            "sync <root> (dir)",
            "write parts/\(id).log", "sync parts/\(id).log", "sync <root>/parts (dir)",
            "write parts/\(id).log",
        ])
    }

    func testATornOffset_isCutBeforeTheNextNote() throws {
        let log = spool.partLogs.log(for: id)
        try log.begin(record)
        log.recordOffset(5)
        let path = temp.spoolPath + "/parts/\(id).log"
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write("R 13 0000".data(using: .utf8)!)
        handle.closeFile()
        let again = spool.partLogs.log(for: id)
        XCTAssertEqual(again.load()?.tus?.offset, 5)
        again.recordOffset(9)
        XCTAssertEqual(spool.partLogs.tusState(of: id)?.offset, 9)
    }

    /// Given up (failed, purged): the termination is owed durably before the log goes.
    func testGiveUp_owesTheTermination_thenRemovesTheLog() throws {
        try spool.partLogs.log(for: id).begin(record)
        let owed = try XCTUnwrap(try spool.partLogs.giveUp(id, now: Timestamp(millisecondsSinceEpoch: 1000)))
        XCTAssertEqual(owed.kind, .tusTermination)
        XCTAssertEqual(owed.uploadID, record.uploadURL)
        XCTAssertEqual(owed.url, record.endpoint)
        XCTAssertNil(spool.partLogs.tusState(of: id))
        let reopened = try temp.open()  // the folder lives as long as its spool
        XCTAssertEqual(reopened.partLogs.aborts.owed, [owed], "read back as a termination")
        try spool.partLogs.aborts.confirmed(record.uploadURL)
        XCTAssertEqual(spool.partLogs.aborts.owed, [])
    }

    /// An operator who switched --url between s3:// and tus+ while an upload was under way: a log
    /// of either kind is read as what it is, never misread. Giving up the other kind is the
    /// attempt's, through the engine (`StartOverRecord(otherKind:)`): the read owes nothing and
    /// syncs nothing (it runs on a transport's thread).
    func testALogOfEitherKind_isReadAsWhatItIs_andTheReadOwesAndSyncsNothing() throws {
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let log = spool.partLogs.log(for: id)
        try log.begin(record)
        log.recordOffset(7)
        fs.resetLog()
        XCTAssertEqual(spool.partLogs.log(for: id).load(), .tus(record, offset: 7))
        let s3 = PartLogCodec.State(size: 20 << 20, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: "http://h/b/k")
        try spool.partLogs.log(for: id).begin(s3)
        XCTAssertEqual(spool.partLogs.log(for: id).load(), .s3(s3))
        XCTAssertEqual(fs.calls.filter { $0.name == AbortLog.fileName }.map(\.description), [], "aborts.log is not touched")
        XCTAssertEqual(spool.partLogs.aborts.owed, [])
        XCTAssertTrue(FileManager.default.fileExists(atPath: temp.spoolPath + "/parts/\(id).log"))
    }
}
