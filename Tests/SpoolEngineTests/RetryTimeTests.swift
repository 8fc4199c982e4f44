import Glibc
import SpoolCore
import SpoolTestSupport
import XCTest

/// When the next attempt comes, under a manual clock: the outage probes, Retry-After, the
/// jittered backoff and a timed-out attempt. The first request (started by the first step) is
/// answered by hand; `autoAnswer` answers the ones after it.
final class RetryTimeTests: EngineTestCase {
    private func startAnswering(_ outcome: UploadOutcome, policy: RetryPolicy = RetryPolicy()) throws -> EmbeddedEngine {
        try drop("item.txt")
        let embedded = try start(configuration(policy: policy))
        XCTAssertEqual(embedded.transport.started.count, 1)
        embedded.transport.autoAnswer = outcome
        try embedded.transport.answerNext(outcome)
        try embedded.advanceTime(by: 0)
        return embedded
    }

    func testOutage_probesAfter1_2_4Seconds_cappedAt60_andResumesOnAnAnswer() throws {
        let embedded = try startAnswering(.failed(.connectionRefused))

        try embedded.advanceTime(to: 250)
        let times = embedded.transport.startTimes(since: embedded.startedAt)
        XCTAssertEqual(times, [0, 1, 3, 7, 15, 31, 63, 123, 183, 243], "probes 1, 2, 4 ... s apart, at most 60 s")
        XCTAssertEqual(attempts(in: .pending), [0], "probes during an outage do not count")

        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(to: 303)
        XCTAssertEqual(embedded.transport.started.count, 11, "the next probe at 303 s")
        XCTAssertEqual(temp.names(in: .pending), [], "uploaded by the probe")
    }

    /// Retry-After on a retryable answer is its item's next attempt time (on a throttled one it
    /// pauses the whole daemon: `ThrottleTests`).
    func testRetryAfter_isTheNextAttemptTimeExactly() throws {
        let busy = UploadOutcome.answered(HTTPAnswer(status: 500, retryAfterSeconds: 30))
        let embedded = try startAnswering(busy)  // backoff alone would retry within 1 s

        try embedded.advanceTime(to: 29.999)
        XCTAssertEqual(embedded.transport.started.count, 1, "not before Retry-After")
        try embedded.advanceTime(to: 30)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [0, 30], "at now + Retry-After")
    }

    func testBackoff_isJitteredWithinHalfToAllOfTheDoublingDelay() throws {
        clock.setRandoms([0, 0.5, 0.999])
        let embedded = try startAnswering(.status(503), policy: RetryPolicy(maximumAttempts: 4, baseDelaySeconds: 4))

        try embedded.advanceTime(to: 100)
        let times = embedded.transport.startTimes(since: embedded.startedAt)
        // Delays after attempts 1, 2, 3: in [2, 4), [4, 8), [8, 16), placed by the randoms 0, 0.5, 0.999.
        XCTAssertEqual(times.count, 4)
        let delays = zip(times.dropFirst(), times).map { $0 - $1 }
        for (delay, expected) in zip(delays, [2, 6, 15.992]) { XCTAssertEqual(delay, expected, accuracy: 0.0005) }
        for (delay, ceiling) in zip(delays, [4.0, 8, 16]) {
            XCTAssertGreaterThanOrEqual(delay, ceiling / 2)
            XCTAssertLessThan(delay, ceiling)
        }
        XCTAssertEqual(attempts(in: .failed), [4], "parked after the 4th attempt")
    }

    func testTimedOutAttempt_isCountedAndRetriedAtItsBackoff() throws {
        clock.setRandoms([0.5])
        let embedded = try startAnswering(.failed(.deadline(seconds: 30)))
        XCTAssertEqual(attempts(in: .pending), [1], "a timed-out attempt counts")

        try embedded.advanceTime(to: 0.749)
        XCTAssertEqual(embedded.transport.started.count, 1)
        try embedded.advanceTime(to: 0.75)  // base 1 s: uniform in [0.5, 1), 0.75 at random 0.5
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [0, 0.75])
        XCTAssertEqual(attempts(in: .pending), [2])
    }
}

/// An item whose attempt count an operator set to the largest a name holds (`.a9999`) is parked,
/// never claimed: the next count has no file name (it used to trap the daemon).
final class AttemptLimitTests: EngineTestCase {
    func testItemAtTheAttemptLimit_isParkedInFailed_withoutARequest() throws {
        try drop("kept.txt")
        var factory = TestItems()
        let item = factory.incoming("limit.txt")
        try temp.write(Array("limit".utf8), to: "limit.txt", in: .incoming)
        _ = try temp.open().add([item])
        let id = try XCTUnwrap(ItemID(item.metadata.id))
        for kind in [ItemFileName.Kind.json, .blob] {
            let from = temp.path(.pending, ItemFileName(id: id, attempt: 0, kind: kind).description)
            let to = temp.path(.pending, ItemFileName(id: id, attempt: 9_999, kind: kind).description)
            XCTAssertEqual(rename(from, to), 0)
        }
        // Due now on the manual clock (a pending item is due at its json's mtime).
        let milliseconds = clock.now().millisecondsSinceEpoch
        let time = timespec(tv_sec: Int(milliseconds / 1000), tv_nsec: 0)
        var times = [time, time]
        let json = temp.path(.pending, ItemFileName(id: id, attempt: 9_999, kind: .json).description)
        XCTAssertEqual(utimensat(AT_FDCWD, json, &times, 0), 0)
        let embedded = try start(configuration(concurrency: 2))
        try embedded.advanceTime(by: 0)

        XCTAssertEqual(attempts(in: .failed), [9_999], "parked as it was")
        XCTAssertEqual(embedded.transport.started.map(\.request.id).contains(id), false, "no request for it")
        XCTAssertEqual(embedded.transport.started.count, 1, "the other item is still uploaded")
    }
}
