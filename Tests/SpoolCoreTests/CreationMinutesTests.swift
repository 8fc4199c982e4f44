import SpoolCore
import XCTest

/// The daemon's queue shape by age, kept as items join and leave: bounded by the days it spans,
/// not by the items it counts.
final class CreationMinutesTests: XCTestCase {
    private let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    private func minutesAgo(_ minutes: Double) -> Timestamp { now.adding(seconds: -minutes * 60) }

    func testShape_countsEachMinuteAtItsMiddle_likeTheShapeOfAges() {
        var minutes = CreationMinutes()
        var direct = QueueAgeShape()
        for age in [0.2, 0.4, 3.5, 3.6, 100.5, 5000.5, 30_000.0] {
            minutes.add(minutesAgo(age))
            direct.add(ageSeconds: age * 60)
        }
        XCTAssertEqual(minutes.shape(now: now), direct)
        XCTAssertEqual(minutes.total, 7)
    }

    /// A queue made over 40 days, one item a minute: once folded, minutes older than the last
    /// bucket's lower bound share one count, so at most about 2^14 are kept; leaving works for
    /// folded and kept items alike.
    func testFold_keepsAtMostTheLastBucketsMinutes_andRemovalStillCounts() {
        var minutes = CreationMinutes()
        let total = 40 * 24 * 60
        for m in 0..<total { minutes.add(minutesAgo(Double(m) + 0.5)) }
        XCTAssertEqual(minutes.minutesKept, total)
        minutes.fold(now: now)
        XCTAssertLessThanOrEqual(minutes.minutesKept, (1 << 14) + 2)
        XCTAssertEqual(minutes.total, total)
        let shape = minutes.shape(now: now)
        XCTAssertEqual(shape.total, total)
        XCTAssertEqual(shape.counts[QueueAgeShape.bucketCount - 1], total - (1 << 14), "the 16384+ min bucket")
        for m in 0..<total where m % 2 == 0 { minutes.remove(minutesAgo(Double(m) + 0.5)) }
        XCTAssertEqual(minutes.total, total / 2)
        XCTAssertEqual(minutes.shape(now: now).total, total / 2)
        minutes.remove(minutesAgo(0.5))  // removed already: its minute is empty
        XCTAssertEqual(minutes.total, total / 2, "an item never counted (or gone) changes nothing")
    }

    /// A census read in bulk (the daemon's count of the queue beyond memory) merges in.
    func testMerge_addsAnotherCount_foldedOrNot() {
        var memory = CreationMinutes()
        memory.add(minutesAgo(1.5))
        var census = CreationMinutes()
        census.add(minutesAgo(20_000))
        census.add(minutesAgo(2.5))
        census.fold(now: now)
        memory.merge(census)
        XCTAssertEqual(memory.total, 3)
        XCTAssertEqual(memory.shape(now: now).counts[QueueAgeShape.bucketCount - 1], 1)
        memory.remove(minutesAgo(20_000))
        XCTAssertEqual(memory.shape(now: now).counts[QueueAgeShape.bucketCount - 1], 0)
    }

    /// With nothing joining or leaving, the shape changes when a minute's middle crosses a bucket's
    /// bound: the daemon rewrites its counts then, not every second.
    func testNextChange_isWhenAMinuteCrossesItsBucketsBound() {
        var minutes = CreationMinutes()
        XCTAssertNil(minutes.nextChange(after: now))
        minutes.add(minutesAgo(2.5))  // its minute's middle is 2 min 30 s old, in 2-4 min
        minutes.add(minutesAgo(20_000))  // past the last bound: never changes bucket
        let next = try? XCTUnwrap(minutes.nextChange(after: now))
        let middleAge = now.millisecondsSinceEpoch - ((minutesAgo(2.5).millisecondsSinceEpoch / 60_000) * 60_000 + 30_000)
        XCTAssertEqual(next?.millisecondsSinceEpoch, now.millisecondsSinceEpoch + 240_000 - middleAge, "when it turns 4 min old")
        var old = CreationMinutes()
        old.add(minutesAgo(20_000))
        XCTAssertNil(old.nextChange(after: now))
    }
}
