import SpoolCore
import XCTest

final class RecycleHandoffTests: XCTestCase {
    func testEncoded_parsesBackToTheSameHandoff() {
        let handoff = RecycleHandoff(
            lockDescriptor: 7, generation: 3, startedAt: Timestamp(millisecondsSinceEpoch: 1_790_000_000_123),
            ingested: 40, uploaded: 39, failed: 1, retried: 2)
        XCTAssertEqual(RecycleHandoff(parsing: handoff.encoded), handoff)
        var withReference = handoff
        withReference.referenceKiB = 40_960
        XCTAssertEqual(RecycleHandoff(parsing: withReference.encoded), withReference)
        XCTAssertNil(RecycleHandoff(parsing: handoff.encoded)?.referenceKiB, "no reference noted yet")
    }

    func testParsing_refusesAnythingIncompleteOrOdd() {
        let good = RecycleHandoff(lockDescriptor: 5, generation: 1, startedAt: Timestamp(millisecondsSinceEpoch: 1)).encoded
        XCTAssertNotNil(RecycleHandoff(parsing: good))
        XCTAssertNil(RecycleHandoff(parsing: ""))
        XCTAssertNil(RecycleHandoff(parsing: "lock=5"))
        XCTAssertNil(RecycleHandoff(parsing: good.replacingOccurrences(of: "lock=5", with: "lock=-5")))
        XCTAssertNil(RecycleHandoff(parsing: good.replacingOccurrences(of: "lock=5", with: "lock=99999999999")))
        XCTAssertNil(RecycleHandoff(parsing: good + ";junk"))
        XCTAssertNil(RecycleHandoff(parsing: good.replacingOccurrences(of: "failed=0", with: "failed=x")))
    }
}
