import SpoolCore
import XCTest

final class DueQueueTests: XCTestCase {
    private func id(_ n: Int) -> ItemID {
        let s = String(n)
        return ItemID("20261121T141003123Z-" + String(repeating: "0", count: 6 - s.count) + s)!
    }

    func testEmpty() {
        var q = DueQueue()
        XCTAssertTrue(q.isEmpty)
        XCTAssertNil(q.first)
        XCTAssertNil(q.popFirst())
    }

    func testRandomPushes_popSortedByTimeThenID() {
        var rng = SplitMix64(seed: 7)
        for round in 0..<20 {
            var q = DueQueue()
            var pushed: [DueQueue.Entry] = []
            let n = Int(rng.next() % 300)
            for i in 0..<n {
                // Few distinct times, so ties are common.
                let entry = DueQueue.Entry(notBefore: Timestamp(millisecondsSinceEpoch: Int64(rng.next() % 8)), id: id(Int(rng.next() % 1000) * 1000 + i))
                pushed.append(entry)
                q.push(entry)
            }
            XCTAssertEqual(q.count, n)
            var popped: [DueQueue.Entry] = []
            while let e = q.popFirst() { popped.append(e) }
            let expected = pushed.sorted { ($0.notBefore, $0.id.rawValue) < ($1.notBefore, $1.id.rawValue) }
            XCTAssertEqual(popped, expected, "round \(round)")
            XCTAssertTrue(q.isEmpty)
        }
    }

    func testTies_popInIDOrder() {
        var q = DueQueue()
        let t = Timestamp(millisecondsSinceEpoch: 5)
        for n in [3, 1, 2] { q.push(.init(notBefore: t, id: id(n))) }
        q.push(.init(notBefore: Timestamp(millisecondsSinceEpoch: 4), id: id(9)))
        XCTAssertEqual(q.first?.id, id(9))
        XCTAssertEqual([q.popFirst(), q.popFirst(), q.popFirst(), q.popFirst()].map { $0?.id }, [id(9), id(1), id(2), id(3)])
    }

    func testInterleavedPushAndPop_alwaysYieldsTheMinimum() {
        var rng = SplitMix64(seed: 99)
        var q = DueQueue()
        var model: [DueQueue.Entry] = []
        for i in 0..<2000 {
            if rng.next() % 3 == 0, !model.isEmpty {
                model.sort { ($0.notBefore, $0.id.rawValue) < ($1.notBefore, $1.id.rawValue) }
                XCTAssertEqual(q.popFirst(), model.removeFirst())
            } else {
                let e = DueQueue.Entry(notBefore: Timestamp(millisecondsSinceEpoch: Int64(rng.next() % 50)), id: id(i))
                q.push(e)
                model.append(e)
            }
        }
        XCTAssertEqual(q.count, model.count)
    }

    func testCountDue_countsOnlyEntriesDueNow_upToTheLimit() {
        var q = DueQueue()
        var rng = SplitMix64(seed: 11)
        var due = 0
        for i in 0..<500 {
            let at = Int64(rng.next() % 100)
            if at <= 30 { due += 1 }
            q.push(DueQueue.Entry(notBefore: Timestamp(millisecondsSinceEpoch: at), id: id(i)))
        }
        let now = Timestamp(millisecondsSinceEpoch: 30)
        XCTAssertEqual(q.countDue(at: now, upTo: 1000), due)
        XCTAssertEqual(q.countDue(at: now, upTo: 7), 7)
        XCTAssertEqual(q.countDue(at: Timestamp(millisecondsSinceEpoch: -1), upTo: 1000), 0)
        XCTAssertEqual(DueQueue().countDue(at: now, upTo: 10), 0)
    }
}
