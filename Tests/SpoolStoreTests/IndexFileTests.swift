import Foundation
import Glibc
import SpoolCore
@testable import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

final class IndexFileTests: StoreTestCase {
    let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    let ids = (0..<5).map { ItemID("20261121T14100312\($0)Z-0000-9f3ab2c1-f\($0)")! }

    private var indexPath: String { temp.spoolPath + "/" + SpoolFolder.indexFileName }
    private func indexBytes() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: indexPath))) }
    private func fresh() -> IndexFile { IndexFile(root: spool.root, fs: spool.fs) }
    private func loc(_ s: ItemState, _ a: Int) -> ItemLocation { ItemLocation(s, attempt: a) }

    private func history() -> [IndexRecord] {
        [
            IndexRecord(.add, ids[0], from: nil, to: loc(.pending, 0)),
            IndexRecord(.add, ids[1], from: nil, to: loc(.pending, 0)),
            IndexRecord(.claim, ids[0], from: loc(.pending, 0), to: loc(.inflight, 1)),
            IndexRecord(.requeue, ids[0], from: loc(.inflight, 1), to: loc(.pending, 1)),
            IndexRecord(.claim, ids[1], from: loc(.pending, 0), to: loc(.inflight, 1)),
            IndexRecord(.done, ids[1], from: loc(.inflight, 1), to: nil),
        ]
    }

    func testAppendThenOpen_seesTheLastRecordPerItem() throws {
        let index = fresh()
        try index.append(Array(history().prefix(3)))
        try index.append(Array(history().dropFirst(3)))
        let (last, report) = try fresh().openAndRecover(now: now)
        XCTAssertEqual(last, [ids[0]: history()[3], ids[1]: history()[5]])
        XCTAssertEqual(report.records, 6)
        XCTAssertEqual(report.truncatedBytes, 0)
        XCTAssertNil(report.setAsideAs)
        XCTAssertEqual(IndexLogCodec.decode(try indexBytes()).records, history())
    }

    func testEmptyIndex_getsAHeader() throws {
        let (last, report) = try fresh().openAndRecover(now: now)
        XCTAssertEqual(last, [:])
        XCTAssertEqual(report.records, 0)
        XCTAssertEqual(try indexBytes(), IndexLogCodec.encodeHeader())
    }

    func testTornTail_isCutAndReported_andAppendingContinues() throws {
        try fresh().append(history())
        let whole = try indexBytes()
        let lastLength = IndexLogCodec.encode(history()[5]).count
        for (cut, garbage) in [(1, [UInt8]()), (lastLength - 3, Array(repeating: 0, count: 40)), (7, Array("R 9 zz\u{1}".utf8))] {
            var damaged = Array(whole.dropLast(cut))
            damaged += garbage
            try Data(damaged).write(to: URL(fileURLWithPath: indexPath))
            let index = fresh()
            let (last, report) = try index.openAndRecover(now: now)
            XCTAssertEqual(report.records, 5, "cut \(cut)")
            XCTAssertEqual(report.truncatedBytes, lastLength - cut + garbage.count, "cut \(cut)")
            XCTAssertNil(report.setAsideAs)
            XCTAssertEqual(last[ids[1]], history()[4], "the torn `done` is gone")
            XCTAssertEqual(try indexBytes(), Array(whole.dropLast(lastLength)), "file truncated at the last good record")
            try index.append([history()[5]])
            XCTAssertEqual(try indexBytes(), whole)
        }
    }

    func testFlippedByteMidFile_setsTheFileAside_andAFreshIndexWorks() throws {
        try fresh().append(history())
        var bytes = try indexBytes()
        let offset = IndexLogCodec.encodeHeader().count + IndexLogCodec.encode(history()[0]).count + 30
        bytes[offset] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: indexPath))

        let index = fresh()
        let (_, report) = try index.openAndRecover(now: now)
        let aside = try XCTUnwrap(report.setAsideAs)
        XCTAssertTrue(aside.hasPrefix("index.wal.corrupt-"), aside)
        XCTAssertTrue(temp.rootNames().contains(aside))
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: temp.spoolPath + "/" + aside))), bytes, "kept as it was")
        XCTAssertEqual(try indexBytes(), IndexLogCodec.encodeHeader())

        try index.append([history()[0]])
        let (last, again) = try fresh().openAndRecover(now: now)
        XCTAssertNil(again.setAsideAs)
        XCTAssertEqual(last, [ids[0]: history()[0]])
    }

    func testTwoCorruptIndexesInTheSameMillisecond_areBothKept() throws {
        var asides: [String] = []
        for round in 0..<2 {
            try fresh().append(history())
            var bytes = try indexBytes()
            bytes[IndexLogCodec.encodeHeader().count + 5] ^= 0x20
            try Data(bytes).write(to: URL(fileURLWithPath: indexPath))
            let (_, report) = try fresh().openAndRecover(now: now)
            asides.append(try XCTUnwrap(report.setAsideAs, "round \(round)"))
        }
        let kept = temp.rootNames().filter { $0.hasPrefix("index.wal.corrupt-") }
        XCTAssertEqual(kept.count, 2, "both damaged indexes are kept as evidence: \(asides)")
    }

    func testCompaction_keepsOnlyLiveRecords_andAnotherWriterFollowsTheNewFile() throws {
        // Writer B stands for `spoold enqueue` in another process: its own root descriptor and index.
        let otherRoot = try spool.fs.open(temp.spoolPath, relativeTo: nil, flags: [.directory, .followSymlinks], mode: 0)
        defer { spool.fs.close(otherRoot) }
        let daemon = fresh()
        let enqueue = IndexFile(root: otherRoot, fs: spool.fs)
        try daemon.append(history())
        try enqueue.append([IndexRecord(.add, ids[2], from: nil, to: loc(.pending, 0))])  // B now holds the old file open
        let before = try XCTUnwrap(TemporarySpool.inode(of: indexPath)).inode

        let live = [IndexRecord(.live, ids[0], from: nil, to: loc(.pending, 1)), IndexRecord(.live, ids[2], from: nil, to: loc(.pending, 0))]
        try daemon.compact(live: live)
        XCTAssertNotEqual(TemporarySpool.inode(of: indexPath)?.inode, before)
        XCTAssertEqual(IndexLogCodec.decode(try indexBytes()).records, live)
        XCTAssertFalse(temp.rootNames().contains("index.wal.compact"))

        let late = IndexRecord(.add, ids[3], from: nil, to: loc(.pending, 0))
        try enqueue.append([late])
        let mine = IndexRecord(.claim, ids[2], from: loc(.pending, 0), to: loc(.inflight, 1))
        try daemon.append([mine])
        let scan = IndexLogCodec.decode(try indexBytes())
        XCTAssertEqual(scan.damage, .none)
        XCTAssertEqual(scan.records, live + [late, mine], "appends after compaction must land in the new file")
        let (last, _) = try fresh().openAndRecover(now: now)
        XCTAssertEqual(last[ids[3]], late)
        XCTAssertNil(last[ids[1]], "records of finished items are compacted away")
    }

    func testConcurrentAppenders_neverInterleaveRecords() throws {
        let otherRoot = try spool.fs.open(temp.spoolPath, relativeTo: nil, flags: [.directory, .followSymlinks], mode: 0)
        defer { spool.fs.close(otherRoot) }
        let a = fresh()
        let b = IndexFile(root: otherRoot, fs: spool.fs)
        let group = DispatchGroup()
        let errors = ErrorBox()
        for (writer, id) in [(a, ids[0]), (b, ids[1])] {
            nonisolated(unsafe) let w = writer
            DispatchQueue.global().async(group: group) {
                do {
                    for n in 0..<50 {
                        try w.append([IndexRecord(.claim, id, from: ItemLocation(.pending, attempt: n), to: ItemLocation(.inflight, attempt: n + 1))])
                    }
                } catch { errors.add(error) }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        XCTAssertTrue(errors.all.isEmpty, "\(errors.all)")
        let scan = IndexLogCodec.decode(try indexBytes())
        XCTAssertEqual(scan.damage, .none)
        XCTAssertEqual(scan.records.count, 100)
    }
}

private final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func add(_ error: Error) { lock.withLock { errors.append(error) } }
    var all: [Error] { lock.withLock { errors } }
}
