import SpoolCore
import XCTest

final class AttemptTallyTests: XCTestCase {
    let t0 = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    private func history(_ outcomes: String...) -> [AttemptRecord] {
        outcomes.enumerated().map { AttemptRecord(number: $0.offset + 1, startedAt: t0, finishedAt: t0, outcome: $0.element) }
    }

    func testAnsweredAndInterrupted_comeFromTheHistory() {
        let tally = AttemptTally(ended: 4, history: history("retryable", "interrupted", "interrupted", "retryable"))
        XCTAssertEqual(tally, AttemptTally(answered: 2, interrupted: 2))
        XCTAssertEqual(tally.ended, 4)
    }

    func testAStartedAttemptWithoutAnEntry_countsAsInterrupted() {
        // A json recreated by recovery has no history; an entry recovery could not write is missing too.
        XCTAssertEqual(AttemptTally(ended: 3, history: []), AttemptTally(answered: 0, interrupted: 3))
        XCTAssertEqual(AttemptTally(ended: 3, history: history("retryable")), AttemptTally(answered: 1, interrupted: 2))
        XCTAssertEqual(AttemptTally(ended: 0, history: history("retryable")), AttemptTally(answered: 0, interrupted: 0))
        XCTAssertEqual(AttemptTally(ended: -1, history: []), AttemptTally(answered: 0, interrupted: 0))
    }

    func testOnlyTheAttemptsSinceTheCountStarted_count() {
        // `spoold retry` after three answered failures: .a0 again, the history kept. One new attempt since.
        let tally = AttemptTally(ended: 1, history: history("retryable", "retryable", "retryable", "interrupted"))
        XCTAssertEqual(tally, AttemptTally(answered: 0, interrupted: 1))
    }

    func testOutcomes_answeredOrNot() {
        for word in ["success", "retryable", "final"] {
            XCTAssertTrue(AttemptRecord(number: 1, startedAt: t0, finishedAt: t0, outcome: word).isAnswered, word)
        }
        for word in ["interrupted", "outage", "something-new"] {
            XCTAssertFalse(AttemptRecord(number: 1, startedAt: t0, finishedAt: t0, outcome: word).isAnswered, word)
        }
    }
}
