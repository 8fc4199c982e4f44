import Glibc
import SpoolCore
@testable import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

final class SpoolCommitTests: StoreTestCase {
    private func addItems(_ n: Int) throws -> [NewItem] {
        var batch: [NewItem] = []
        for i in 0..<n {
            try temp.write([UInt8(i)], to: "f\(i)", in: .incoming)
            batch.append(items.incoming("f\(i)"))
        }
        XCTAssertEqual(try spool.add(batch), batch.map { .added($0.id) })
        return batch
    }

    private func claim(_ item: NewItem, metadata: Bool = false) -> SpoolTransition {
        SpoolTransition(
            IndexRecord(.claim, item.id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)),
            metadata: metadata ? item.metadata : nil)
    }

    /// A commit in steps (`beginCommit`, `continueCommit`): the claims move before the records
    /// are synced, and nothing is synced on the caller's thread; a finished transition's files
    /// move only after the syncs the last step returned, its folders synced after that.
    func testCommitInSteps_claimsMoveUnsynced_otherTransitionsWaitForTheSyncsHandedOver() throws {
        let batch = try addItems(2)
        _ = try spool.commit([claim(batch[1])])
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        fs.resetLog()
        var requeued = batch[1].metadata
        requeued.attempts.append(AttemptRecord(number: 1, startedAt: Timestamp(millisecondsSinceEpoch: 0), finishedAt: Timestamp(millisecondsSinceEpoch: 0), outcome: "retryable", httpStatus: 503))
        let requeue = SpoolTransition(
            IndexRecord(.requeue, batch[1].id, from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 1)),
            metadata: requeued)
        var (commit, claimed, work) = try spool.beginCommit([claim(batch[0]), requeue], claims: 1, removingInBackground: false)

        XCTAssertEqual(claimed, [.moved])
        XCTAssertEqual(temp.names(in: .inflight).filter { $0.hasPrefix(batch[0].id.rawValue) }.count, 2, "the claim moved")
        XCTAssertEqual(fs.calls(.sync) + fs.calls(.syncFileSystem), [], "nothing synced on the caller's thread")
        XCTAssertEqual(fs.calls(.write).filter { $0.name == SpoolFolder.indexFileName }.count, 1, "only the claim's record is written")

        // 1: the staged json, before its record is written.
        try work.perform()
        XCTAssertEqual(fs.calls(.sync).map(\.name), ["\(batch[1].id).a1.json"])
        fs.resetLog()
        work = try XCTUnwrap(try spool.continueCommit(&commit))
        XCTAssertEqual(fs.calls(.write).map(\.name), [SpoolFolder.indexFileName], "the requeue's record, written now")
        XCTAssertEqual(fs.calls(.sync), [])
        XCTAssertEqual(temp.names(in: .pending), [], "nothing moves before its record is durable")
        // 2: the index.
        try work.perform()
        XCTAssertEqual(fs.calls(.sync).map(\.name), [SpoolFolder.indexFileName])
        fs.resetLog()
        work = try XCTUnwrap(try spool.continueCommit(&commit))
        XCTAssertEqual(temp.names(in: .pending), ["\(batch[1].id).a1.blob", "\(batch[1].id).a1.json"])
        XCTAssertEqual(fs.calls(.sync), [], "the folders are synced by whoever makes the work")
        // 3: the folders the requeue touched; then the commit is done.
        try work.perform()
        XCTAssertEqual(Set(fs.calls(.sync).map(\.name)), ["tmp", "inflight", "pending"])
        XCTAssertNil(try spool.continueCommit(&commit))
        XCTAssertEqual(commit.results, [.moved])
        XCTAssertEqual(spool.commitsInProgress, 0)
    }

    func testVanishedItem_isReported_andTheRestOfTheBatchMoves() throws {
        let batch = try addItems(3)
        XCTAssertEqual(unlink(temp.path(.pending, "\(batch[1].id).a0.blob")), 0)
        XCTAssertEqual(unlink(temp.path(.pending, "\(batch[1].id).a0.json")), 0)
        let results = try spool.commit(batch.map { claim($0) })
        XCTAssertEqual(results[0], .moved)
        XCTAssertEqual(results[2], .moved)
        guard case .vanished(let why) = results[1] else { return XCTFail("\(results[1])") }
        XCTAssertTrue(why.contains(batch[1].id.rawValue), why)
        XCTAssertEqual(temp.names(in: .inflight), [batch[0], batch[2]].flatMap { ["\($0.id).a1.blob", "\($0.id).a1.json"] })
        XCTAssertEqual(temp.names(in: .pending), [])
    }

    func testVanishedItem_withNewMetadata_leavesNoStrayJson() throws {
        let batch = try addItems(2)
        XCTAssertEqual(unlink(temp.path(.pending, "\(batch[0].id).a0.blob")), 0)
        XCTAssertEqual(unlink(temp.path(.pending, "\(batch[0].id).a0.json")), 0)
        let results = try spool.commit(batch.map { claim($0, metadata: true) })
        guard case .vanished = results[0] else { return XCTFail("\(results)") }
        XCTAssertEqual(results[1], .moved)
        XCTAssertEqual(temp.names(in: .inflight), ["\(batch[1].id).a1.blob", "\(batch[1].id).a1.json"])
        XCTAssertEqual(temp.names(in: .tmp), [])
        let left = temp.names(in: .pending)
        XCTAssertEqual(left, [], "a vanished item is not resurrected as a lone json")
    }

    func testRequeue_setsTheNextAttemptTimeAsTheJsonMtime() throws {
        let item = try addItems(1)[0]
        _ = try spool.commit([claim(item)])
        let notBefore = Timestamp(millisecondsSinceEpoch: 1_900_000_000_123)
        var metadata = item.metadata
        metadata.attempts.append(AttemptRecord(number: 1, startedAt: notBefore, finishedAt: notBefore, outcome: "retryable", httpStatus: 500))
        let requeue = SpoolTransition(
            IndexRecord(.requeue, item.id, from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 1)),
            metadata: metadata, notBefore: notBefore)
        XCTAssertEqual(try spool.commit([requeue]), [.moved])
        let json = ItemFileName(id: item.id, attempt: 1, kind: .json)
        XCTAssertEqual(try spool.status(of: json, at: ItemLocation(.pending, attempt: 1)).modifiedMilliseconds, notBefore.millisecondsSinceEpoch)
        XCTAssertEqual(try spool.readMetadata(item.id, at: ItemLocation(.pending, attempt: 1)).attempts.first?.httpStatus, 500)
    }

    func testDone_removesBothFiles() throws {
        let item = try addItems(1)[0]
        _ = try spool.commit([claim(item)])
        XCTAssertEqual(try spool.commit([SpoolTransition(IndexRecord(.done, item.id, from: ItemLocation(.inflight, attempt: 1), to: nil))]), [.moved])
        XCTAssertEqual(temp.names(in: .inflight), [])
        XCTAssertEqual(temp.names(in: .pending), [])
    }

    func testQuarantine_movesTheLoneJsonToFailedWithNewContents() throws {
        let item = try addItems(1)[0]
        XCTAssertEqual(unlink(temp.path(.pending, "\(item.id).a0.blob")), 0)
        var metadata = item.metadata
        metadata.failureReason = "blob missing"
        try spool.quarantine(item.id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.failed, attempt: 0), metadata: metadata)
        XCTAssertEqual(temp.names(in: .pending), [])
        XCTAssertEqual(temp.names(in: .failed), ["\(item.id).a0.json"])
        XCTAssertEqual(try spool.readMetadata(item.id, at: ItemLocation(.failed, attempt: 0)).failureReason, "blob missing")
        XCTAssertEqual(temp.names(in: .tmp), [])
    }

    func testReadSmallFile_refusesFifosAndOversizedFiles() throws {
        XCTAssertEqual(mkfifo(temp.path(.pending, "fifo.json"), 0o600), 0)
        XCTAssertThrowsError(try spool.readSmallFile("fifo.json", in: .pending, limit: 100)) {
            XCTAssertTrue("\($0)".contains("not a regular file"), "\($0)")
        }
        try temp.write(Array(repeating: 32, count: 101), to: "big.json", in: .pending)
        XCTAssertThrowsError(try spool.readSmallFile("big.json", in: .pending, limit: 100)) {
            XCTAssertTrue("\($0)".contains("larger than 100"), "\($0)")
        }
    }
}
