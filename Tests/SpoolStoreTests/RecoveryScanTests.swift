import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// Start-up recovery's read of the spool, done by the store (`Spool+Recovery`): what it finds, what
/// it sets aside or removes and says so as values (the store writes no log), what it leaves alone,
/// and that a daemon's start reads what a stop may have left under way, not the queue.
final class RecoveryScanTests: XCTestCase {
    private let now = Timestamp(millisecondsSinceEpoch: 1_795_000_100_000)
    private var temp: TemporarySpool!

    override func setUpWithError() throws { temp = try TemporarySpool() }
    override func tearDown() { temp.cleanUp() }

    func testInFlightScan_readsInflightAndTmp_andProbesOnlyTheItemsNamed_neverListingPending() throws {
        _ = try temp.open()
        var items = TestItems()
        for n in 0..<200 {
            var metadata = items.metadata("queued-\(n)")
            metadata.size = 1
            try temp.writeItem(metadata, payload: [1])
        }
        // An upload a stop interrupted, with a json a lost claim left one attempt below.
        var interrupted = items.metadata("interrupted")
        interrupted.size = 1
        let x = try XCTUnwrap(ItemID(interrupted.id))
        try temp.writeItem(interrupted, payload: [1], in: .inflight, attempt: 1)
        try temp.write(MetadataCodec.encode(interrupted), to: ItemFileName(id: x, attempt: 0, kind: .json).description, in: .pending)
        // An item the index names (its last record moved it to failed/ at attempt 2).
        var named = items.metadata("named")
        named.size = 1
        let y = try XCTUnwrap(ItemID(named.id))
        try temp.writeItem(named, payload: [1], in: .failed, attempt: 2)

        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        var findings: [RecoveryFinding] = []
        let files = try spool.inFlightRecoveryScan(
            lastRecords: [y: IndexRecord(.fail, y, from: ItemLocation(.inflight, attempt: 2), to: ItemLocation(.failed, attempt: 2))],
            now: now) { findings.append($0) }

        XCTAssertEqual(Set(fs.calls(.list).map(\.name)), ["inflight", "tmp"], "pending/ (the queue) is not read")
        let probed = fs.calls(.fstatat).map(\.name)
        XCTAssertEqual(probed.filter { !$0.hasPrefix(x.rawValue) && !$0.hasPrefix(y.rawValue) }, [], "only the items named are probed")
        XCTAssertEqual(probed.count, 2 * 3 * 3 * 2, "two items, three folders, three attempts each, json and blob")
        XCTAssertEqual(Set(files), [
            .init(.state(.inflight), ItemFileName(id: x, attempt: 1, kind: .json)),
            .init(.state(.inflight), ItemFileName(id: x, attempt: 1, kind: .blob)),
            .init(.state(.pending), ItemFileName(id: x, attempt: 0, kind: .json)),
            .init(.state(.failed), ItemFileName(id: y, attempt: 2, kind: .json)),
            .init(.state(.failed), ItemFileName(id: y, attempt: 2, kind: .blob)),
        ])
        XCTAssertEqual(findings, [])
    }

    /// Entries that are no item's: an inspection names them and changes nothing; a scan sets aside
    /// what is not a regular file, removes tmp/'s strays, leaves a stray in a state folder alone,
    /// and says each in the order met.
    func testScan_setsAsideNonFiles_removesTmpStrays_leavesOtherNamesAlone_andSaysSo() throws {
        let spool = try temp.open()
        var items = TestItems()
        let whole = items.metadata("whole")
        let wholeID = try XCTUnwrap(ItemID(whole.id))
        try temp.writeItem(whole, payload: [])
        let folderID = items.id("folder")
        let folderName = ItemFileName(id: folderID, attempt: 0, kind: .json).description
        XCTAssertEqual(mkdir(temp.path(.pending, folderName), 0o700), 0)
        try temp.write([1], to: "notes.txt", in: .pending)
        try temp.write([1], to: ".hidden", in: .pending)
        XCTAssertEqual(mkfifo(temp.path(.tmp, "pipe"), 0o600), 0)
        try temp.write([1], to: "junk", in: .tmp)
        let torn = ItemFileName(id: items.id("torn"), attempt: 0, kind: .json).description
        try temp.write(Array("{\"id\":".utf8), to: torn, in: .tmp)

        var inspected: [RecoveryInspection] = []
        try spool.inspectRecovery { inspected.append($0) }
        XCTAssertEqual(inspected.count, 1)
        XCTAssertEqual(Set(inspected[0].tmpStrays), ["tmp/junk", "tmp/\(torn)"])
        XCTAssertEqual(Set(inspected[0].notRegular), ["pending/\(folderName)", "tmp/pipe"])
        XCTAssertEqual(temp.names(in: .tmp), [torn, "junk", "pipe"].sorted(), "an inspection changes nothing")
        XCTAssertFalse(temp.rootNames().contains(SpoolFolder.corruptFolderName))

        var findings: [RecoveryFinding] = []
        let files = try spool.recoveryScan(now: now) { findings.append($0) }
        XCTAssertEqual(Set(files), [
            .init(.state(.pending), ItemFileName(id: wholeID, attempt: 0, kind: .json)),
            .init(.state(.pending), ItemFileName(id: wholeID, attempt: 0, kind: .blob)),
        ])
        var setAside: [String: String] = [:]
        var other: [RecoveryFinding] = []
        for finding in findings {
            if case .setAside(let name, _, let aside) = finding { setAside[name] = aside } else { other.append(finding) }
        }
        XCTAssertEqual(Set(setAside.keys), ["pending/\(folderName)", "tmp/pipe"])
        for (name, aside) in setAside {
            XCTAssertTrue(aside.hasPrefix("corrupt/\(name.replacingOccurrences(of: "/", with: ".")).\(now.compact)-"), aside)
            XCTAssertTrue(temp.rootNames().contains("corrupt"))
            XCTAssertEqual(access("\(temp.spoolPath)/\(aside)", F_OK), 0, "\(aside) is where the spool said")
        }
        XCTAssertTrue(findings.contains(.setAside("tmp/pipe", .fifo, aside: setAside["tmp/pipe"]!)))
        XCTAssertTrue(findings.contains(.setAside("pending/\(folderName)", .directory, aside: setAside["pending/\(folderName)"]!)))
        XCTAssertEqual(other.count, 3)
        XCTAssertEqual(Set(other.filter { if case .tmpStray = $0 { true } else { false } }), [.tmpStray("tmp/junk"), .tmpStray("tmp/\(torn)")])
        XCTAssertTrue(other.contains(.notAnItemFile("pending/notes.txt")))
        XCTAssertEqual(temp.names(in: .tmp), [], "strays in tmp/ are removed")
        XCTAssertEqual(temp.names(in: .pending), [".hidden", ItemFileName(id: wholeID, attempt: 0, kind: .blob).description,
                                                  ItemFileName(id: wholeID, attempt: 0, kind: .json).description, "notes.txt"].sorted())
    }

    /// An entry that cannot be set aside (here corrupt/ is a file) is found, not thrown: one such
    /// entry must not stop every start.
    func testScan_anEntryThatCannotBeSetAside_isSaidAndLeft() throws {
        let spool = try temp.open()
        try temp.write([1], atPath: "\(temp.spoolPath)/\(SpoolFolder.corruptFolderName)")
        XCTAssertEqual(mkfifo(temp.path(.tmp, "pipe"), 0o600), 0)
        var findings: [RecoveryFinding] = []
        _ = try spool.recoveryScan(now: now) { findings.append($0) }
        guard findings.count == 1, case .notSetAside("tmp/pipe", .fifo, let reason) = findings[0] else {
            return XCTFail("\(findings)")
        }
        XCTAssertTrue(reason.contains(SpoolFolder.corruptFolderName), reason)
        XCTAssertEqual(temp.names(in: .tmp), ["pipe"])
    }
}
