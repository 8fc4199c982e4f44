import SpoolCore
import XCTest

final class ItemLifecycleTests: XCTestCase {
    let t0 = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    let policy = RetryPolicy()

    private func fresh() -> ItemLifecycle { ItemLifecycle(location: ItemLocation(.pending, attempt: 0), notBefore: t0) }

    func testDefaultPolicy_givesThreeAttempts() {
        XCTAssertEqual(RetryPolicy().maximumAttempts, 3)
    }

    func testClaim_countsAttemptBeforeUpload() {
        var item = fresh()
        XCTAssertEqual(item.claim(), .claimAndUpload(from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)))
        XCTAssertEqual(item.location, ItemLocation(.inflight, attempt: 1))
        XCTAssertEqual(item.attemptsMade, 1)
    }

    func testClaim_atTheLargestCountANameHolds_failsInsteadOfTrapping() {
        var item = ItemLifecycle(location: ItemLocation(.pending, attempt: ItemFileName.maximumAttempt), notBefore: t0)
        guard case .fail(let from, let to, let reason) = item.claim() else { return XCTFail("claimed") }
        XCTAssertEqual(from, ItemLocation(.pending, attempt: 9_999))
        XCTAssertEqual(to, ItemLocation(.failed, attempt: 9_999))
        XCTAssertTrue(reason.text.contains("spoold retry"), reason.text)
        XCTAssertEqual(reason.code, .attemptLimit)
        XCTAssertEqual(item.state, .failed)
    }

    func testThree500s_failOnTheThirdAttempt() {
        var item = fresh()
        var now = t0
        for attempt in 1...2 {
            _ = item.claim()
            let action = item.finish(.status(500), policy: policy, now: now, unitRandom: 0.5)
            guard case .requeue(let from, let to, let notBefore) = action else { return XCTFail("attempt \(attempt): \(action)") }
            XCTAssertEqual(from, ItemLocation(.inflight, attempt: attempt))
            XCTAssertEqual(to, ItemLocation(.pending, attempt: attempt))
            XCTAssertGreaterThan(notBefore, now)
            XCTAssertFalse(item.isDue(at: now))
            XCTAssertTrue(item.isDue(at: notBefore))
            now = notBefore
        }
        XCTAssertEqual(item.claim(), .claimAndUpload(from: ItemLocation(.pending, attempt: 2), to: ItemLocation(.inflight, attempt: 3)))
        let last = item.finish(.status(500), policy: policy, now: now, unitRandom: 0.5)
        guard case .fail(let from, let to, let reason) = last else { return XCTFail("\(last)") }
        XCTAssertEqual(from, ItemLocation(.inflight, attempt: 3))
        XCTAssertEqual(to, ItemLocation(.failed, attempt: 3))
        XCTAssertTrue(reason.text.contains("HTTP 500"), reason.text)
        XCTAssertTrue(reason.text.contains("3 of 3"), reason.text)
        XCTAssertEqual(reason.code, .attemptsUsed)
        XCTAssertEqual(item.state, .failed)
        XCTAssertFalse(item.isDue(at: now.adding(seconds: 1e6)))
    }

    func testFailFailSuccess_completes() {
        var item = fresh()
        var now = t0
        for _ in 1...2 {
            _ = item.claim()
            guard case .requeue(_, _, let notBefore) = item.finish(.status(503), policy: policy, now: now, unitRandom: 0)
            else { return XCTFail() }
            now = notBefore
        }
        _ = item.claim()
        XCTAssertEqual(
            item.finish(.status(201), policy: policy, now: now, unitRandom: 0),
            .complete(from: ItemLocation(.inflight, attempt: 3), to: nil))
        XCTAssertEqual(item.state, .done)
    }

    func testSuccess_withKeepDone_movesToDone() {
        var item = fresh()
        _ = item.claim()
        XCTAssertEqual(
            item.finish(.status(200), policy: policy, now: t0, unitRandom: 0, keepDone: true),
            .complete(from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.done, attempt: 1)))
    }

    func test400_isFinalAfterOneAttempt() {
        var item = fresh()
        _ = item.claim()
        let action = item.finish(.status(400), policy: policy, now: t0, unitRandom: 0)
        guard case .fail(let from, let to, let reason) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(from, ItemLocation(.inflight, attempt: 1))
        XCTAssertEqual(to, ItemLocation(.failed, attempt: 1))
        XCTAssertTrue(reason.text.contains("HTTP 400"), reason.text)
        XCTAssertEqual(reason.code, .serverRefused)
    }

    func testOutage_handsTheAttemptBack_andNeverFails() {
        var item = fresh()
        for i in 0..<100 {
            let now = t0.adding(seconds: Double(i))
            _ = item.claim()
            XCTAssertEqual(
                item.finish(.failed(.connectionRefused), policy: policy, now: now, unitRandom: 0.9),
                .handBack(from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 0), notBefore: now))
            XCTAssertEqual(item.location, ItemLocation(.pending, attempt: 0))
            XCTAssertTrue(item.isDue(at: now))
        }
    }

    func testOutage_afterEarlierFailures_keepsTheirCount() {
        var item = ItemLifecycle(location: ItemLocation(.pending, attempt: 2), notBefore: t0)
        _ = item.claim()
        XCTAssertEqual(
            item.finish(.failed(.noNetwork), policy: policy, now: t0, unitRandom: 0),
            .handBack(from: ItemLocation(.inflight, attempt: 3), to: ItemLocation(.pending, attempt: 2), notBefore: t0))
    }

    /// A throttled answer (429, 503 with Retry-After, S3 SlowDown) is no verdict on the item: its
    /// attempt is handed back however often it comes, after earlier failures too.
    func testThrottled_handsTheAttemptBack_andNeverFails() {
        let busy = UploadOutcome.answered(HTTPAnswer(status: 503, retryAfterSeconds: 30))
        let slowDown = UploadOutcome.answered(HTTPAnswer(status: 503, excerpt: "<Error><Code>SlowDown</Code></Error>").ruled(.throttled, because: "S3 SlowDown"))
        var item = ItemLifecycle(location: ItemLocation(.pending, attempt: 2), notBefore: t0)
        for (i, outcome) in Array(repeating: [UploadOutcome.status(429), busy, slowDown], count: 30).joined().enumerated() {
            let now = t0.adding(seconds: Double(i))
            _ = item.claim()
            XCTAssertEqual(
                item.finish(outcome, policy: policy, now: now, unitRandom: 0.9),
                .handBack(from: ItemLocation(.inflight, attempt: 3), to: ItemLocation(.pending, attempt: 2), notBefore: now))
        }
    }

    func testNetworkErrorAfterSending_countsAsAnAttempt() {
        var item = fresh()
        _ = item.claim()
        guard case .requeue(_, let to, _) = item.finish(.failed(.connectionLost), policy: policy, now: t0, unitRandom: 0)
        else { return XCTFail() }
        XCTAssertEqual(to, ItemLocation(.pending, attempt: 1))
    }

    func testRetryAfter_isRespected() {
        var item = fresh()
        _ = item.claim()
        let outcome = UploadOutcome.answered(HTTPAnswer(status: 500, retryAfterSeconds: 120))
        XCTAssertEqual(
            item.finish(outcome, policy: policy, now: t0, unitRandom: 0.99),
            .requeue(from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 1), notBefore: t0.adding(seconds: 120)))
    }

    func testRetryAfter_isCappedByMaximumBackoff() {
        var item = fresh()
        _ = item.claim()
        let outcome = UploadOutcome.answered(HTTPAnswer(status: 502, retryAfterSeconds: 86_400))
        let action = item.finish(outcome, policy: RetryPolicy(maximumBackoffSeconds: 60), now: t0, unitRandom: 0)
        XCTAssertEqual(action, .requeue(from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 1), notBefore: t0.adding(seconds: 60)))
    }

    func testBackoff_withoutRetryAfter_usesThePolicy() {
        var item = ItemLifecycle(location: ItemLocation(.pending, attempt: 1), notBefore: t0)
        let policy = RetryPolicy(maximumAttempts: 5, baseDelaySeconds: 10, maximumBackoffSeconds: 1000)
        _ = item.claim()  // attempt 2: ceiling 20 s
        XCTAssertEqual(
            item.finish(.status(500), policy: policy, now: t0, unitRandom: 0),
            .requeue(from: ItemLocation(.inflight, attempt: 2), to: ItemLocation(.pending, attempt: 2), notBefore: t0.adding(seconds: 10)))
    }

    private func interrupted(_ attempt: Int, answered: Int) -> AttemptTally {
        AttemptTally(answered: answered, interrupted: attempt - 1 - answered)
    }

    func testRecoverInterrupted_withAttemptsLeft_keepsTheCountAndRetries() {
        var item = ItemLifecycle(location: ItemLocation(.inflight, attempt: 2), notBefore: t0)
        let now = t0.adding(seconds: 5)
        XCTAssertEqual(
            item.recoverInterrupted(policy: policy, earlier: AttemptTally(answered: 1, interrupted: 0), now: now),
            .requeue(from: ItemLocation(.inflight, attempt: 2), to: ItemLocation(.pending, attempt: 2), notBefore: now))
        XCTAssertTrue(item.isDue(at: now))
    }

    func testRecoverInterrupted_onTheLastAnsweredAttempt_retriesWhileUnderTheInterruptedBudget() {
        // Two answered 500s, then spoold killed during the third: the third did not use an answered attempt.
        var item = ItemLifecycle(location: ItemLocation(.inflight, attempt: 3), notBefore: t0)
        XCTAssertEqual(
            item.recoverInterrupted(policy: policy, earlier: AttemptTally(answered: 2, interrupted: 0), now: t0),
            .requeue(from: ItemLocation(.inflight, attempt: 3), to: ItemLocation(.pending, attempt: 3), notBefore: t0))
        // The fourth attempt starts as .a4 and its answer is the third answered one: the last.
        _ = item.claim()
        XCTAssertEqual(item.location, ItemLocation(.inflight, attempt: 4))
        let action = item.finish(.status(500), policy: policy, earlier: AttemptTally(answered: 2, interrupted: 1), now: t0, unitRandom: 0)
        guard case .fail(_, let to, let reason) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(to, ItemLocation(.failed, attempt: 4))
        XCTAssertEqual(reason, FailureReason(.attemptsUsed, "HTTP 500 on attempt 4 (3 of 3 answered attempts used)"))
    }

    func testFinish_afterAnInterruptedAttempt_hasAnsweredAttemptsLeft() {
        // .a3 after one interruption: only two answers so far, so a 500 is retried.
        var item = ItemLifecycle(location: ItemLocation(.inflight, attempt: 3), notBefore: t0)
        let action = item.finish(.status(500), policy: policy, earlier: AttemptTally(answered: 1, interrupted: 1), now: t0, unitRandom: 0)
        guard case .requeue(_, let to, let notBefore) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(to, ItemLocation(.pending, attempt: 3))
        XCTAssertEqual(notBefore, t0.adding(seconds: 1), "the backoff follows the answered attempts (2: ceiling 2 s), not N")
    }

    func testRecoverInterrupted_failsWhenTheInterruptedBudgetIsUsedUp() {
        var item = ItemLifecycle(location: ItemLocation(.inflight, attempt: 10), notBefore: t0)
        let action = item.recoverInterrupted(policy: policy, earlier: interrupted(10, answered: 0), now: t0)
        guard case .fail(let from, let to, let reason) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(from, ItemLocation(.inflight, attempt: 10))
        XCTAssertEqual(to, ItemLocation(.failed, attempt: 10))
        XCTAssertEqual(reason, FailureReason(.interrupted, "interrupted on attempt 10: spoold stopped mid-upload 10 times (at most 10)"))
        XCTAssertEqual(FailureClass.classify(failureCode: reason.code.rawValue, failureReason: reason.text, lastAttempt: nil), .interrupted)
    }

    func testRecoverInterrupted_failsWhenTheAnsweredAttemptsAreUsedUp() {
        // Three answers already (--max-attempts lowered, or an operator's mv): no fourth.
        var item = ItemLifecycle(location: ItemLocation(.inflight, attempt: 4), notBefore: t0)
        let action = item.recoverInterrupted(policy: policy, earlier: AttemptTally(answered: 3, interrupted: 0), now: t0)
        guard case .fail(_, _, let reason) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(reason, FailureReason(.interrupted, "interrupted on attempt 4: 3 of 3 answered attempts used"))
    }

    func testCrashingOnEveryAttempt_givesUpAfterTheInterruptedBudget() {
        // Rule 4: claim, crash, recover, claim, crash... the count survives each crash, and the
        // interrupted attempts it holds end the item in failed/ once their budget is used.
        var item = fresh()
        var actions: [ItemLifecycle.Action] = []
        var history: [AttemptRecord] = []
        while item.state != .failed, actions.count < 100 {
            _ = item.claim()
            let earlier = AttemptTally(ended: item.attemptsMade - 1, history: history)
            actions.append(item.recoverInterrupted(policy: policy, earlier: earlier, now: t0))
            history.append(AttemptRecord(number: item.attemptsMade, startedAt: t0, finishedAt: t0, outcome: "interrupted"))
        }
        XCTAssertEqual(item.location, ItemLocation(.failed, attempt: 10))
        XCTAssertEqual(actions.count, 10)
        XCTAssertEqual(actions.filter { if case .fail = $0 { true } else { false } }.count, 1)
        // --max-interrupted 1: the first crash parks it.
        var strict = fresh()
        _ = strict.claim()
        let action = strict.recoverInterrupted(policy: RetryPolicy(maximumInterruptedAttempts: 1), earlier: AttemptTally(answered: 0, interrupted: 0), now: t0)
        guard case .fail = action else { return XCTFail("\(action)") }
    }

    func testInnocentItem_survivesManyCrashesAndIsUploaded() {
        // Killed during four attempts (a slow receiver), then answered: never parked.
        var item = fresh()
        var history: [AttemptRecord] = []
        for _ in 1...4 {
            _ = item.claim()
            let action = item.recoverInterrupted(
                policy: policy, earlier: AttemptTally(ended: item.attemptsMade - 1, history: history), now: t0)
            guard case .requeue = action else { return XCTFail("\(action)") }
            history.append(AttemptRecord(number: item.attemptsMade, startedAt: t0, finishedAt: t0, outcome: "interrupted"))
        }
        _ = item.claim()
        let earlier = AttemptTally(ended: item.attemptsMade - 1, history: history)
        XCTAssertEqual(earlier, AttemptTally(answered: 0, interrupted: 4))
        XCTAssertEqual(
            item.finish(.status(201), policy: policy, earlier: earlier, now: t0, unitRandom: 0),
            .complete(from: ItemLocation(.inflight, attempt: 5), to: nil))
    }

    func testHandBack_returnsTheAttempt() {
        var item = ItemLifecycle(location: ItemLocation(.inflight, attempt: 1), notBefore: t0)
        XCTAssertEqual(
            item.handBack(now: t0),
            .handBack(from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 0), notBefore: t0))
    }

    func testEachAction_carriesItsIndexRecord() {
        var items = ItemIDGenerator(processTag: 1)
        let id = items.next(at: t0, originalName: "a.txt")
        var item = fresh()
        let claim = item.claim()
        XCTAssertEqual(claim.record(for: id), IndexRecord(.claim, id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)))
        var copy = item
        XCTAssertEqual(
            copy.handBack(now: t0).record(for: id),
            IndexRecord(.requeue, id, from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 0)))
        copy = item
        XCTAssertEqual(copy.finish(.status(201), policy: policy, now: t0, unitRandom: 0).record(for: id).operation, .done)
        copy = item
        XCTAssertEqual(copy.finish(.status(400), policy: policy, now: t0, unitRandom: 0).record(for: id).operation, .fail)
        XCTAssertEqual(
            item.finish(.status(503), policy: policy, now: t0, unitRandom: 0).record(for: id),
            IndexRecord(.requeue, id, from: ItemLocation(.inflight, attempt: 1), to: ItemLocation(.pending, attempt: 1)))
    }

    func testQuarantine_parksThePendingItemInFailed_withItsAttemptsCounted() {
        var item = ItemLifecycle(location: ItemLocation(.pending, attempt: 2), notBefore: t0)
        XCTAssertEqual(
            item.quarantine(reason: FailureReason(.blobChanged, "its payload changed size")),
            .fail(
                from: ItemLocation(.pending, attempt: 2), to: ItemLocation(.failed, attempt: 2),
                reason: FailureReason(.blobChanged, "its payload changed size")))
        XCTAssertEqual(item.state, .failed)
    }

    func testRetryAndPurge_areLifecycleEvents_withTheirRecords() {
        var items = ItemIDGenerator(processTag: 1)
        let id = items.next(at: t0, originalName: "a.txt")
        var failed = ItemLifecycle(location: ItemLocation(.failed, attempt: 3), notBefore: t0)
        XCTAssertEqual(failed.purge().record(for: id), IndexRecord(.purge, id, from: ItemLocation(.failed, attempt: 3), to: nil))
        let retry = failed.retry(now: t0.adding(seconds: 5))
        XCTAssertEqual(retry, .retry(from: ItemLocation(.failed, attempt: 3), to: ItemLocation(.pending, attempt: 0), notBefore: t0.adding(seconds: 5)))
        XCTAssertEqual(retry.record(for: id), IndexRecord(.retry, id, from: ItemLocation(.failed, attempt: 3), to: ItemLocation(.pending, attempt: 0)))
        XCTAssertTrue(failed.isDue(at: t0.adding(seconds: 5)), "a retried item is due at once")
    }

    // MARK: The direct take

    private let a1 = ItemLocation(.inflight, attempt: 1)

    func testTakeDirect_uploadsAttemptOneWithNothingRecorded() {
        let (item, action) = ItemLifecycle.takeDirect(now: t0)
        XCTAssertEqual(action, .uploadDirect(to: a1))
        XCTAssertEqual(item.location, a1)
        XCTAssertEqual(item.take, .direct)
        XCTAssertEqual(item.attemptsMade, 1, "counted like a claim's: the first attempt")
    }

    func testDirectTake_accepted_discardsTheBlobOnly() {
        var (item, _) = ItemLifecycle.takeDirect(now: t0)
        XCTAssertEqual(item.finish(.status(201), policy: policy, now: t0, unitRandom: 0.5), .discardDirect(from: a1))
        XCTAssertEqual(item.state, .done)
    }

    func testDirectTake_otherEnds_areTheQueuedItemsMoves_fromTheDirectTake() {
        var retried = ItemLifecycle.takeDirect(now: t0).0
        guard case .requeue(let from, let to, _) = retried.finish(.status(500), policy: policy, now: t0, unitRandom: 0.5) else {
            return XCTFail("requeued")
        }
        XCTAssertEqual(from, a1)
        XCTAssertEqual(to, ItemLocation(.pending, attempt: 1))
        XCTAssertEqual(retried.take, .direct, "the move that ends it writes the item's first json")
        XCTAssertEqual(retried.claim(), .claimAndUpload(from: to, to: ItemLocation(.inflight, attempt: 2)))
        XCTAssertEqual(retried.take, .claimed)
        XCTAssertEqual(retried.finish(.status(201), policy: policy, now: t0, unitRandom: 0.5), .complete(from: ItemLocation(.inflight, attempt: 2), to: nil))

        var handedBack = ItemLifecycle.takeDirect(now: t0).0
        XCTAssertEqual(handedBack.handBack(now: t0), .handBack(from: a1, to: ItemLocation(.pending, attempt: 0), notBefore: t0))

        var refused = ItemLifecycle.takeDirect(now: t0).0
        guard case .fail(a1, ItemLocation(.failed, attempt: 1), _) = refused.finish(.status(400), policy: policy, now: t0, unitRandom: 0.5)
        else { return XCTFail("failed") }
    }
}
