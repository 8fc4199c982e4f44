import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A throttling endpoint under the manual clock: throttled answers burn no attempt and park
/// nothing, the whole daemon is paced by one rate (held back, it sleeps until the next token),
/// Retry-After pauses every request, and `SPOOL/throttled` says so while it lasts.
final class ThrottleTests: EngineTestCase {
    /// As the S3 transport reports it (`S3ErrorClassifier`).
    private let slowDown = S3ErrorClassifier.judge(.status(503, excerpt: "<Error><Code>SlowDown</Code></Error>"))

    private func dropItems(_ count: Int) throws {
        for i in 0..<count { try drop(String(format: "item-%03d.txt", i)) }
    }

    /// An endpoint that throttles everything for ten minutes never parks an item nor counts an
    /// attempt, and is asked at the floor rate (about one request every 2-4 s), not in a loop.
    func testThrottledForTenMinutes_burnsNoAttempt_andParksNothing() throws {
        try dropItems(3)
        let embedded = try start(configuration(settle: 0, concurrency: 3, policy: RetryPolicy(maximumAttempts: 2), direct: false))
        XCTAssertEqual(embedded.transport.started.count, 3)
        embedded.transport.autoAnswer = .status(429)
        for _ in 0..<3 { try embedded.transport.answerNext(.status(429)) }
        try embedded.advanceTime(by: 600)

        XCTAssertEqual(attempts(in: .pending), [0, 0, 0], "no attempt counted")
        XCTAssertEqual(temp.names(in: .failed), [])
        let requests = embedded.transport.started.count
        XCTAssertGreaterThan(requests, 600 / 4, "kept asking")
        XCTAssertLessThan(requests, 600 / 2 + 20, "at the floor rate, 0.5/s")
        let json = try XCTUnwrap(temp.names(in: .pending).first { $0.hasSuffix(".json") })
        XCTAssertEqual(try MetadataCodec.decode(temp.read(.pending, json)).attempts, [], "no history entry either")

        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(by: 30)
        XCTAssertEqual(temp.names(in: .pending), [], "uploaded once the store accepts")
        XCTAssertEqual(temp.names(in: .failed), [])
    }

    /// After a throttled answer, the daemon starts requests at the limited rate, whatever its
    /// concurrency, and in between it sleeps until the next token is due (no step in between).
    func testThrottle_pacesTheWholeDaemon_andSleepsUntilTheNextToken() throws {
        try dropItems(60)
        let embedded = try start(configuration(settle: 0, concurrency: 8, direct: false))
        XCTAssertEqual(embedded.transport.started.count, 8, "open: --concurrency alone")
        for _ in 0..<8 { try embedded.transport.answerNext(slowDown) }  // 8 in the first 100 ms: 80/s
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(attempts(in: .pending).filter { $0 != 0 }, [], "handed back")
        XCTAssertEqual(embedded.transport.started.count, 8, "no token yet")
        let throttledAt = clock.now()
        let rate = try XCTUnwrap(embedded.engine.pacer.current(now: throttledAt).limit?.rate)
        XCTAssertEqual(rate, 80 * 0.7, accuracy: 1e-9, "the manual clock's random is 0.5")
        let due = embedded.engine.pacer.nextStart(now: throttledAt)
        XCTAssertEqual(embedded.nextWake, due, "asleep until the next token, not before")
        XCTAssertGreaterThan(due, throttledAt)

        // Every later request succeeds: the starts follow the rate, 56/s and rising (10/s a second,
        // steeper as the second goes on).
        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(by: 1)
        let starts = embedded.transport.startTimes(since: throttledAt).dropFirst(8)
        XCTAssertGreaterThanOrEqual(starts.count, 50)
        XCTAssertLessThanOrEqual(starts.count, 64, "about 56 + 7 in the second, not 8 at a time")
        let gaps = zip(starts.dropFirst(), starts).map { $0 - $1 }
        XCTAssertGreaterThanOrEqual(gaps.min() ?? 0, 0.0135, "one start per token, 1/71 s apart at the most")
        XCTAssertEqual(temp.names(in: .failed), [])
    }

    /// A throttled answer's Retry-After holds back every request, not just its item's, and the
    /// attempt is handed back.
    func testRetryAfter_onAThrottledAnswer_pausesEveryRequest() throws {
        try dropItems(4)
        let embedded = try start(configuration(settle: 0, concurrency: 2, direct: false))
        let busy = UploadOutcome.answered(HTTPAnswer(status: 429, retryAfterSeconds: 20))
        try embedded.transport.answerNext(busy)
        try embedded.transport.answerNext(.status(201))
        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(by: 19.999)
        XCTAssertEqual(embedded.transport.started.count, 2, "nothing starts during the pause")
        XCTAssertEqual(attempts(in: .pending), [0, 0, 0])
        try embedded.advanceTime(by: 60)
        XCTAssertEqual(temp.names(in: .pending), [])
        let later = embedded.transport.startTimes(since: embedded.startedAt).dropFirst(2)
        XCTAssertEqual(later.min() ?? 0, 20, accuracy: 0.001, "the first one at the end of the pause")
    }

    /// `SPOOL/throttled` holds the rate while the limit lasts and goes when it is lifted (here:
    /// once the queue is empty and 10 s pass with nothing throttled or held back).
    func testMarker_showsTheRate_andGoesWhenTheLimitIsLifted() throws {
        try dropItems(10)
        let spool = try temp.open(fs: fs)
        let embedded = try start(configuration(settle: 0, concurrency: 4, direct: false))
        for _ in 0..<4 { try embedded.transport.answerNext(slowDown) }
        try embedded.advanceTime(by: 0)
        let marker = try XCTUnwrap(ThrottleMarker.read(in: spool), "written when the limit begins")
        XCTAssertEqual(marker.ratePerSecond, 28)
        XCTAssertEqual(marker.reason, "HTTP 503: S3 SlowDown")
        XCTAssertEqual(marker.throttledAnswers, 4)
        XCTAssertEqual(marker.since, clock.now())

        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(by: 2)
        XCTAssertEqual(temp.names(in: .pending), [])
        let later = try XCTUnwrap(ThrottleMarker.read(in: spool))
        XCTAssertGreaterThan(later.ratePerSecond, 28, "rewritten as the rate rose")
        try embedded.advanceTime(by: 10)
        XCTAssertNil(ThrottleMarker.read(in: spool), "removed once lifted")
        XCTAssertNil(embedded.engine.pacer.current(now: clock.now()).limit)
    }

    /// The metrics show the limit, the throttled answers and the attempts handed back.
    func testMetrics_showTheRateAndTheThrottledAnswers() throws {
        try dropItems(4)
        let spool = try temp.open(fs: fs)
        let path = temp.spoolPath + "/spoold.prom"
        let queue = QueueBytes(spool: spool)
        let metrics = SpoolMetrics(spool: spool, queue: queue, path: path, log: EventLog(minimumLevel: .error, clock: { [clock] in clock!.now() }))
        let embedded = try EmbeddedEngine(
            spool: spool, configuration: configuration(settle: 0, concurrency: 4, direct: false), clock: clock, observers: [queue, metrics])
        let text = { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        XCTAssertTrue(text().contains("spoold_throttled 0\n"), text())
        XCTAssertTrue(text().contains("spoold_request_rate_limit 0\n"), text())
        for _ in 0..<4 { try embedded.transport.answerNext(slowDown) }
        try embedded.advanceTime(by: SpoolMetrics.refreshSeconds)

        XCTAssertTrue(text().contains("spoold_throttled 1\n"), text())
        XCTAssertTrue(text().contains("spoold_throttled_answers_total 4\n"), text())
        XCTAssertTrue(text().contains("spoold_uploads_total{outcome=\"throttled\"} 4\n"), text())
        let limit = text().split(separator: "\n").first { $0.hasPrefix("spoold_request_rate_limit ") }
        XCTAssertEqual(limit.flatMap { Double($0.split(separator: " ")[1]) } ?? 0, 28, accuracy: 1, text())
    }

    /// Files dropped while the endpoint throttles wait their turn (taken in as items in step with
    /// the queue, the rest announced in incoming/); none is sent straight from incoming/ past the
    /// limit, and the engine does not spin on those left announced.
    func testFilesDroppedWhileThrottled_waitForTokens_withoutSpinning() throws {
        try dropItems(2)
        let embedded = try start(configuration(settle: 0, concurrency: 4))
        for _ in 0..<2 { try embedded.transport.answerNext(.status(429)) }
        try embedded.advanceTime(by: 0)
        // More than a batch takes while items are due (2 x concurrency + 32): the rest wait announced.
        for i in 0..<100 {
            try temp.write(Array("late \(i)".utf8), to: "late-\(i).txt", in: .incoming)
            embedded.events.feed(InotifyWatcher.movedTo, name: "late-\(i).txt")
        }
        embedded.transport.autoAnswer = .status(429)
        try embedded.advanceTime(by: 20)  // a busy loop would throw EmbeddedEngine.BusyLoop
        let pending = temp.names(in: .pending).filter { $0.hasSuffix(".json") }.count
        XCTAssertGreaterThan(pending, 2, "some taken in as items")
        XCTAssertEqual(pending + temp.names(in: .incoming).count, 102, "the rest wait in incoming/, none sent")
        XCTAssertLessThan(embedded.transport.started.count, 40, "at the floor rate")
        XCTAssertEqual(Set(attempts(in: .pending)), [0])
        XCTAssertEqual(temp.names(in: .failed), [])
    }
}
