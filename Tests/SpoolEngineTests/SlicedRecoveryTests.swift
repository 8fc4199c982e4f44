import Foundation
import Glibc
import SpoolCore
@testable import SpoolEngine
import SpoolStore
import SpoolTestSupport
import XCTest

/// A whole recovery (`spoold check --repair`, a damaged index) and `spoold check` read the spool a
/// slice of ids at a time, so they hold one slice whatever the spool holds; since each id is
/// planned on its own, they find and repair exactly what one read of the whole spool would.
final class SlicedRecoveryTests: XCTestCase {
    private let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    /// 2,400 items, and damage of every kind spread over the ids: lone blobs and jsons, a pair
    /// split across folders, an interrupted upload, a staged orphan, a stray in tmp/, a folder
    /// named like an item file.
    private func makeSpool() throws -> TemporarySpool {
        let temp = try TemporarySpool()
        _ = try temp.open()
        var maker = TestItems(startingAt: now.millisecondsSinceEpoch - 3_000_000)
        for n in 0..<2_400 {
            var metadata = maker.metadata("f\(n).dat")
            metadata.size = 1
            let id = try XCTUnwrap(ItemID(metadata.id))
            let blob = ItemFileName(id: id, attempt: 0, kind: .blob).description
            let json = ItemFileName(id: id, attempt: 0, kind: .json).description
            switch n % 300 {
            case 10: _ = try temp.write([1], to: blob, in: .pending)  // lone blob
            case 20: _ = try temp.write(MetadataCodec.encode(metadata), to: json, in: .pending)  // lone json
            case 30:  // split across folders
                _ = try temp.write([1], to: blob, in: .failed)
                _ = try temp.write(MetadataCodec.encode(metadata), to: json, in: .pending)
            case 40: try temp.writeItem(metadata, payload: [1], in: .inflight, attempt: 1)  // interrupted
            case 50: _ = try temp.write([1], to: blob, in: .tmp)  // a staged orphan
            case 60: XCTAssertEqual(mkdir(temp.path(.pending, json), 0o700), 0)  // not a file
            default: try temp.writeItem(metadata, payload: [1])
            }
        }
        _ = try temp.write([1], to: "junk", in: .tmp)
        return temp
    }

    private func findings(_ spool: Spool, filesPerSlice: Int) throws -> (notes: [String], interrupted: [ItemID], other: Set<String>, slices: Int, most: Int) {
        var notes: [String] = [], interrupted: [ItemID] = [], other = Set<String>()
        var slices = 0, most = 0
        try spool.inspectRecovery(filesPerSlice: filesPerSlice) { inspection in
            slices += 1
            most = max(most, inspection.plan.items.count)
            notes += inspection.plan.notes
            interrupted += inspection.interrupted.keys.sorted()
            other.formUnion(inspection.tmpStrays + inspection.notRegular)
        }
        return (notes, interrupted, other, slices, most)
    }

    func testCheckInSlices_findsWhatOneReadFinds_inTheSameOrder_holdingASliceAtATime() throws {
        let temp = try makeSpool()
        defer { temp.cleanUp() }
        let spool = try temp.open()
        let whole = try findings(spool, filesPerSlice: 1_000_000)
        let sliced = try findings(spool, filesPerSlice: 500)
        XCTAssertEqual(whole.slices, 1)
        XCTAssertGreaterThanOrEqual(sliced.slices, 8, "4,800 files in slices of about 500")
        XCTAssertLessThan(sliced.most, 600, "a slice's items, not the spool's (\(whole.most))")
        XCTAssertFalse(whole.notes.isEmpty)
        XCTAssertEqual(sliced.notes, whole.notes, "the same findings, in id order")
        XCTAssertEqual(sliced.interrupted, whole.interrupted)
        XCTAssertEqual(whole.interrupted.count, 8)
        XCTAssertEqual(sliced.other, whole.other)
        XCTAssertTrue(whole.other.contains("tmp/junk"))
    }

    func testRepairInSlices_leavesTheSpoolAsOneReadWould() throws {
        let first = try makeSpool()
        defer { first.cleanUp() }
        let second = try TemporarySpool()
        defer { second.cleanUp() }
        try FileManager.default.removeItem(atPath: second.directory)
        try FileManager.default.copyItem(atPath: first.directory, toPath: second.directory)
        let log = EventLog(minimumLevel: .error) { [now] in now }
        let one = try SpoolRecovery.run(spool: try first.open(), policy: RetryPolicy(), now: now, log: log, scope: .whole, filesPerSlice: 1_000_000)
        let sliced = try SpoolRecovery.run(spool: try second.open(), policy: RetryPolicy(), now: now, log: log, scope: .whole, filesPerSlice: 500)
        XCTAssertEqual(sliced.notes, one.notes)
        XCTAssertEqual(sliced.requeued, one.requeued)
        XCTAssertEqual(one.requeued, 8)
        XCTAssertEqual(Set(sliced.queued.keys), Set(one.queued.keys), "what recovery touched, not every item")
        XCTAssertLessThan(one.queued.count, 100)
        for folder in [SpoolFolder.pending, .inflight, .failed, .done, .tmp] {
            XCTAssertEqual(second.names(in: folder), first.names(in: folder), "\(folder)")
        }
        XCTAssertEqual(
            first.names(in: .pending).count, 2 * (2_400 - 6 * 8) + 2 * 8 + 2 * 8,
            "whole items, lone blobs given their json, interrupted uploads returned (lone jsons and split pairs to failed/)")
    }
}
