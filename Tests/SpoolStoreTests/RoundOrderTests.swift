import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// Within one engine round (one index fsync), the new claims move and their uploads start before
/// the finished items' files are touched: a freed upload slot waits for the fsync and nothing else.
final class RoundOrderTests: XCTestCase {
    func testClaimsOfARound_moveBeforeItsFinishedItems() throws {
        // One attempt: every 500 parks its item in failed/ (a rename, like a requeue, done in the round).
        let count = 200
        let drain = try RecordedDrain(count: count, answer: .status(500), policy: RetryPolicy(maximumAttempts: 1))
        XCTAssertEqual(drain.summary.failed, count)

        // Split the log at each index fsync; in each part, no claim may follow a parked item.
        var mixedRounds = 0
        var round: [RecordingFileSystem.Call] = []
        func check() {
            let claims = round.indices.filter { round[$0].operation == .rename && round[$0].directory == "pending" && round[$0].toDirectory == "inflight" }
            let parked = round.indices.filter { round[$0].operation == .rename && round[$0].directory == "inflight" && round[$0].toDirectory == "failed" }
            guard let lastClaim = claims.last, let firstParked = parked.first else { return }
            mixedRounds += 1
            XCTAssertLessThan(lastClaim, firstParked, "a claim waited for a finished item: \(round)")
        }
        for call in drain.calls {
            if call.operation == .sync && call.name == SpoolFolder.indexFileName {
                check()
                round = []
            } else {
                round.append(call)
            }
        }
        check()
        XCTAssertGreaterThan(mixedRounds, 0, "no round both claimed and finished items; the test shows nothing")
    }
}
