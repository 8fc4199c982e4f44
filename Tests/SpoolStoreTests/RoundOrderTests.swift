import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// Within one engine round (one index write, one index fsync), the new claims move and their
/// uploads start right after the write, before the fsync; the finished items' files move only
/// after it. A freed upload slot waits for neither the fsync nor the finished items.
final class RoundOrderTests: XCTestCase {
    func testClaimsOfARound_moveBeforeItsFsync_finishedItemsAfterIt() throws {
        // One attempt: every 500 parks its item in failed/ (a rename, like a requeue, done in the round).
        let count = 200
        let drain = try RecordedDrain(count: count, answer: .status(500), policy: RetryPolicy(maximumAttempts: 1))
        XCTAssertEqual(drain.summary.failed, count)

        // Split the log at each index write: one round each.
        var mixedRounds = 0
        var round: [RecordingFileSystem.Call] = []
        func check() {
            let claims = round.indices.filter { round[$0].operation == .rename && round[$0].directory == "pending" && round[$0].toDirectory == "inflight" }
            let parked = round.indices.filter { round[$0].operation == .rename && round[$0].directory == "inflight" && round[$0].toDirectory == "failed" }
            let sync = round.firstIndex { ($0.operation == .sync && $0.name == SpoolFolder.indexFileName) || $0.operation == .syncFileSystem }
            if let firstParked = parked.first {
                XCTAssertNotNil(sync, "a finished item moved before its record was synced: \(round)")
                if let sync { XCTAssertLessThan(sync, firstParked, "a finished item moved before its record was synced: \(round)") }
            }
            if let lastClaim = claims.last, let sync { XCTAssertLessThan(lastClaim, sync, "a claim waited for the fsync: \(round)") }
            if !claims.isEmpty && !parked.isEmpty { mixedRounds += 1 }
        }
        for call in drain.calls {
            if call.operation == .write && call.name == SpoolFolder.indexFileName {
                check()
                round = []
            }
            round.append(call)
        }
        check()
        XCTAssertGreaterThan(mixedRounds, 0, "no round both claimed and finished items; the test shows nothing")
    }
}
