import SpoolCore
import XCTest

final class RetryPolicyTests: XCTestCase {
    func testAllowsAnotherAttempt_untilTheMaximum() {
        let p = RetryPolicy(maximumAttempts: 3)
        XCTAssertTrue(p.allowsAnotherAttempt(after: AttemptTally(answered: 0, interrupted: 0)))
        XCTAssertTrue(p.allowsAnotherAttempt(after: AttemptTally(answered: 2, interrupted: 0)))
        XCTAssertFalse(p.allowsAnotherAttempt(after: AttemptTally(answered: 3, interrupted: 0)))
        XCTAssertFalse(p.allowsAnotherAttempt(after: AttemptTally(answered: 4, interrupted: 0)))
    }

    func testInterruptedAttempts_haveTheirOwnLargerBudget() {
        let p = RetryPolicy(maximumAttempts: 3)
        XCTAssertEqual(p.maximumInterruptedAttempts, 10)
        XCTAssertTrue(p.allowsAnotherAttempt(after: AttemptTally(answered: 2, interrupted: 9)), "12 started, neither budget used up")
        XCTAssertFalse(p.allowsAnotherAttempt(after: AttemptTally(answered: 0, interrupted: 10)))
        XCTAssertEqual(p.exhaustedBudget(AttemptTally(answered: 0, interrupted: 10)), "spoold stopped mid-upload 10 times (at most 10)")
        XCTAssertEqual(p.exhaustedBudget(AttemptTally(answered: 3, interrupted: 1)), "3 of 3 answered attempts used")
        XCTAssertNil(RetryPolicy(maximumInterruptedAttempts: 11).exhaustedBudget(AttemptTally(answered: 0, interrupted: 10)))
    }

    func testJitter_staysBetweenHalfCeilingAndCeiling() {
        let p = RetryPolicy(maximumAttempts: 10, baseDelaySeconds: 2, maximumBackoffSeconds: 1000)
        for attempt in 1...6 {
            let ceiling = 2 * Double(1 << (attempt - 1))
            XCTAssertEqual(p.delaySeconds(afterAttempt: attempt, unitRandom: 0), ceiling / 2, "attempt \(attempt)")
            XCTAssertEqual(p.delaySeconds(afterAttempt: attempt, unitRandom: 0.5), ceiling * 0.75, "attempt \(attempt)")
            for r in stride(from: 0.0, to: 1.0, by: 0.0625) {
                let d = p.delaySeconds(afterAttempt: attempt, unitRandom: r)
                XCTAssertGreaterThanOrEqual(d, ceiling / 2)
                XCTAssertLessThanOrEqual(d, ceiling)
            }
            XCTAssertEqual(p.delaySeconds(afterAttempt: attempt, unitRandom: 0.999_999), ceiling, accuracy: ceiling * 1e-5)
        }
    }

    func testOutOfRangeRandom_isClamped() {
        let p = RetryPolicy(baseDelaySeconds: 4)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 1, unitRandom: -3), 2)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 1, unitRandom: 7), 4)
    }

    func testCeiling_doublesPerAttempt() {
        let p = RetryPolicy(maximumAttempts: 20, baseDelaySeconds: 1, maximumBackoffSeconds: 1e9)
        let delays = (1...10).map { p.delaySeconds(afterAttempt: $0, unitRandom: 0) }
        for i in 1..<delays.count { XCTAssertEqual(delays[i], delays[i - 1] * 2) }
        XCTAssertEqual(delays[0], 0.5)
    }

    func testCeiling_isCapped_evenForHugeAttemptCounts() {
        let p = RetryPolicy(maximumAttempts: 10_000, baseDelaySeconds: 1, maximumBackoffSeconds: 300)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 9, unitRandom: 0), 128)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 10, unitRandom: 0), 150)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 9_999, unitRandom: 0.999_999), 300, accuracy: 0.001)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 0, unitRandom: 0), 0.5)
    }

    func testRetryAfter_replacesTheComputedDelay_andIsCapped() {
        let p = RetryPolicy(baseDelaySeconds: 1, maximumBackoffSeconds: 300)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 1, unitRandom: 0.5, retryAfterSeconds: 42), 42)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 1, unitRandom: 0.5, retryAfterSeconds: 10_000), 300)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 1, unitRandom: 0.5, retryAfterSeconds: -5), 0)
        XCTAssertEqual(p.delaySeconds(afterAttempt: 1, unitRandom: 0.5, retryAfterSeconds: 0), 0)
    }
}
