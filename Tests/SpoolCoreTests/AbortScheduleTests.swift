import SpoolCore
import XCTest

/// When an owed AbortMultipartUpload is sent (again), from its answers alone.
final class AbortScheduleTests: XCTestCase {
    private let t0 = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    private let policy = RetryPolicy(baseDelaySeconds: 1, maximumBackoffSeconds: 300)
    private func abort(_ upload: String) -> OwedAbort {
        OwedAbort(id: ItemID("20261121T141003123Z-0000-9f3ab2c1-p")!, region: "us-east-1", uploadID: upload, url: "http://h/b/k", since: t0)
    }
    private func error(_ status: Int, _ code: String) -> UploadOutcome {
        .status(status, excerpt: "<Error><Code>\(code)</Code><Message>m</Message></Error>")
    }

    func testJudge_confirmedRetriedOrRefused() {
        XCTAssertEqual(AbortSchedule.judge(.status(204)), .confirmed)
        XCTAssertEqual(AbortSchedule.judge(error(404, "NoSuchUpload")), .confirmed, "gone anyway")
        XCTAssertEqual(AbortSchedule.judge(error(503, "SlowDown")), .retry)
        XCTAssertEqual(AbortSchedule.judge(.status(500)), .retry)
        XCTAssertEqual(AbortSchedule.judge(.failed(.connectionRefused)), .retry)
        XCTAssertEqual(AbortSchedule.judge(error(403, "InvalidAccessKeyId")), .retry, "a configuration problem the operator may fix")
        guard case .refused = AbortSchedule.judge(error(405, "MethodNotAllowed")) else { return XCTFail("a 4xx no retry changes") }
    }

    /// Due at once; a failure waits the items' backoff (doubling, with jitter, capped); a
    /// `Retry-After` wins; at most `maximumInFlight` at once; a refusal is held.
    func testBackoffAndLimits() {
        var schedule = AbortSchedule()
        for i in 0..<6 { schedule.add(abort("u\(i)"), now: t0) }
        schedule.add(abort("u0"), now: t0)  // owed twice: one entry
        XCTAssertEqual(schedule.owedCount, 6)
        let first = schedule.takeDue(now: t0)
        XCTAssertEqual(first.count, AbortSchedule.maximumInFlight)
        XCTAssertEqual(schedule.takeDue(now: t0), [], "the rest wait for room")

        XCTAssertEqual(schedule.ended(first[0].uploadID, outcome: .status(204), policy: policy, now: t0, unitRandom: 0), .confirmed)
        guard case .retry(let at, _) = schedule.ended(first[1].uploadID, outcome: .status(503), policy: policy, now: t0, unitRandom: 1)
        else { return XCTFail() }
        XCTAssertEqual(t0.seconds(until: at), 1, accuracy: 0.001, "first failure: base delay")
        let slow = UploadOutcome.answered(HTTPAnswer(status: 503, retryAfterSeconds: 42))
        guard case .retry(let later, _) = schedule.ended(first[2].uploadID, outcome: slow, policy: policy, now: t0, unitRandom: 0)
        else { return XCTFail() }
        XCTAssertEqual(t0.seconds(until: later), 42, accuracy: 0.001)
        guard case .held = schedule.ended(first[3].uploadID, outcome: error(405, "MethodNotAllowed"), policy: policy, now: t0, unitRandom: 0)
        else { return XCTFail() }
        XCTAssertEqual(schedule.ended(first[3].uploadID, outcome: .status(204), policy: policy, now: t0, unitRandom: 0), .unknown, "not in flight")

        let second = schedule.takeDue(now: t0).map(\.uploadID)
        XCTAssertEqual(second.count, 2, "the two that waited for room: \(second)")
        XCTAssertFalse(second.contains(first[1].uploadID), "backing off")
        XCTAssertEqual(schedule.nextDue.map { t0.seconds(until: $0) } ?? -1, 1, accuracy: 0.001)
        let retried = schedule.takeDue(now: t0.adding(seconds: 1)).map(\.uploadID)
        XCTAssertEqual(retried, [first[1].uploadID])
        guard case .retry(let again, _) = schedule.ended(first[1].uploadID, outcome: .status(500), policy: policy, now: t0.adding(seconds: 1), unitRandom: 1)
        else { return XCTFail() }
        XCTAssertEqual(t0.adding(seconds: 1).seconds(until: again), 2, accuracy: 0.001, "doubled")
        XCTAssertEqual(schedule.owedCount, 5, "confirmed ones leave; held ones stay owed")
    }
}
