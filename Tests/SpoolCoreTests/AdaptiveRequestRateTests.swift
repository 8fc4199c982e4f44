import SpoolCore
import XCTest

/// The request rate under throttling, on a hand-moved clock: limited on the first throttled
/// answer, cut once per window, raised additively, floored, paused by Retry-After, lifted.
final class AdaptiveRequestRateTests: XCTestCase {
    /// A multiple of 100 ms: the send meter's slots start on it.
    private let t0 = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    private let slowDown = AdaptiveRequestRate.Answer.throttled(reason: "HTTP 503: S3 SlowDown")

    private func at(_ milliseconds: Int64) -> Timestamp { t0.adding(milliseconds: milliseconds) }

    /// A rate whose daemon started `count` requests in its first `count` milliseconds.
    private func sending(_ count: Int, settings: AdaptiveRequestRate.Settings = .init()) -> AdaptiveRequestRate {
        var rate = AdaptiveRequestRate(settings: settings)
        for ms in 0..<count { XCTAssertTrue(rate.take(now: at(Int64(ms))), "open: every request may start") }
        return rate
    }

    func testOpen_limitsNothing() {
        var rate = sending(1000)
        XCTAssertNil(rate.limit)
        XCTAssertEqual(rate.nextStart(now: at(1000)), at(1000))
        XCTAssertEqual(rate.answered(.accepted, startedAt: at(0), now: at(1000), unitRandom: 0.5), .none)
        XCTAssertEqual(rate.answered(.other, startedAt: at(0), now: at(1000), unitRandom: 0.5), .none)
        XCTAssertNil(rate.limit, "successes and failures do not limit")
    }

    /// 48 requests in the first 48 ms is 480 a second (not 48): the first throttled answer
    /// limits the rate to the jittered factor of that, and the next token comes after one to two
    /// token intervals.
    func testFirstThrottle_limitsToAJitteredShareOfWhatWasSent() {
        var rate = sending(48)
        XCTAssertEqual(rate.answered(slowDown, startedAt: at(0), now: at(50), unitRandom: 0.5), .limited(rate: 336))
        let limit = try! XCTUnwrap(rate.limit)
        XCTAssertEqual(limit.rate, 480 * 0.7, accuracy: 1e-9)
        XCTAssertEqual(limit.since, at(50))
        XCTAssertEqual(limit.reason, "HTTP 503: S3 SlowDown")
        XCTAssertEqual(rate.throttledAnswers, 1)
        XCTAssertFalse(rate.take(now: at(50)), "the bucket starts empty")
        // 1.5 token intervals of 1/336 s: 4.46 ms, rounded up to the millisecond.
        XCTAssertEqual(rate.nextStart(now: at(50)), at(55))
        XCTAssertFalse(rate.take(now: at(54)))
        XCTAssertTrue(rate.take(now: at(55)))

        var other = sending(48)
        _ = other.answered(slowDown, startedAt: at(0), now: at(50), unitRandom: 0)
        XCTAssertEqual(other.limit?.rate ?? 0, 480 * 0.6, accuracy: 1e-9, "a random factor in [0.6, 0.8)")
        XCTAssertEqual(other.nextStart(now: at(50)), at(54), "one token interval at random 0")
    }

    /// Over any stretch, the starts granted stay within the rate plus one burst and reach it.
    func testLimited_grantsTheRate_smoothly() {
        var rate = sending(100)
        _ = rate.answered(slowDown, startedAt: at(0), now: at(100), unitRandom: 0.5)  // 1000/s sent: 700/s
        var granted = 0
        var largestBurst = 0
        var now = at(100)
        while now < at(2100) {
            var burst = 0
            while rate.take(now: now) { burst += 1 }
            granted += burst
            largestBurst = max(largestBurst, burst)
            now = max(now.adding(milliseconds: 1), rate.nextStart(now: now))
        }
        XCTAssertLessThanOrEqual(granted, 1400 + 35)
        XCTAssertGreaterThanOrEqual(granted, 1390)
        XCTAssertLessThanOrEqual(largestBurst, 1, "woken at each token's time, one start at a time")
    }

    /// Answers to requests that left before the last cut were sent at the old rate: they cut
    /// nothing. One that left after it cuts again.
    func testThrottle_cutsOncePerWindow() {
        var rate = sending(100)
        _ = rate.answered(slowDown, startedAt: at(0), now: at(100), unitRandom: 0.5)
        for ms: Int64 in [0, 50, 99, 100] {
            XCTAssertEqual(rate.answered(slowDown, startedAt: at(ms), now: at(101), unitRandom: 0.5), .none)
        }
        XCTAssertEqual(rate.limit?.rate ?? 0, 700, accuracy: 1e-9)
        XCTAssertEqual(rate.throttledAnswers, 5, "counted all the same")
        guard case .cut(let cut) = rate.answered(slowDown, startedAt: at(101), now: at(120), unitRandom: 0.5) else {
            return XCTFail("a request sent since the cut cuts")
        }
        XCTAssertEqual(cut, 490, accuracy: 1e-9)
        XCTAssertEqual(rate.answered(slowDown, startedAt: at(110), now: at(121), unitRandom: 0.5), .none, "sent before the second cut")
    }

    func testCuts_stopAtTheFloor() {
        var rate = sending(10)
        var now = at(100)
        for _ in 0..<40 {
            _ = rate.answered(slowDown, startedAt: now, now: now, unitRandom: 0)
            now = now.adding(milliseconds: 10)
        }
        XCTAssertEqual(rate.limit?.rate, 0.5)
    }

    /// While every request succeeds the rate climbs, however many answers there are: by
    /// `increasePerSecond` a second in the first second after the throttled answer, twice that in
    /// the next, and so on. Answers to requests from before the cut raise nothing.
    func testSuccesses_raiseTheRateAdditively() {
        var rate = sending(100)
        _ = rate.answered(slowDown, startedAt: at(0), now: at(100), unitRandom: 0.5)  // 700/s
        XCTAssertEqual(rate.answered(.accepted, startedAt: at(50), now: at(1100), unitRandom: 0.5), .none)
        XCTAssertEqual(rate.limit?.rate ?? 0, 700, accuracy: 1e-9, "sent before the cut")
        // The daemon sends all it may, and every request succeeds.
        var now = at(100)
        while now < at(5100) {
            now = now.adding(milliseconds: 2)
            while rate.take(now: now) {}
            _ = rate.answered(.accepted, startedAt: at(101), now: now, unitRandom: 0.5)
        }
        XCTAssertEqual(rate.limit?.rate ?? 0, 875, accuracy: 0.1, "5 s of successes: +10 x (5 + 5 x 5 / 2)")

        // One success after a silence (of answers, not of requests) is at most one second's worth.
        while now < at(7_100) {
            now = now.adding(milliseconds: 2)
            while rate.take(now: now) {}
        }
        _ = rate.answered(.accepted, startedAt: at(101), now: now, unitRandom: 0.5)
        XCTAssertEqual(rate.limit?.rate ?? 0, 955, accuracy: 0.1, "one second at 7 s after the throttle: +8 x 10")
    }

    /// A daemon that sends less than it may (here 10 requests a second, all succeeding) raises
    /// its rate to twice what it sends, no higher: no allowance is saved up for a burst.
    func testRate_climbsNoHigherThanTwiceWhatIsSent() {
        var rate = sending(1)  // 10/s sent: limited to 7/s
        _ = rate.answered(slowDown, startedAt: at(0), now: at(100), unitRandom: 0.5)
        var now = at(100)
        while now < at(5100) {
            now = now.adding(milliseconds: 100)
            if rate.take(now: now) { _ = rate.answered(.accepted, startedAt: now, now: now.adding(milliseconds: 1), unitRandom: 0.5) }
        }
        // Twice the 10/s sent (the meter reads 10 starts over the 0.9 s since the oldest: 11.1/s).
        XCTAssertEqual(rate.limit?.rate ?? 0, 22.2, accuracy: 0.5, "5 s of successes would give 182/s")
    }

    /// A limit that neither met a throttle nor held a request back for `quietSeconds` limits
    /// nothing: it is lifted. A request held back keeps it.
    func testLimit_liftedWhenQuiet_keptWhileItHoldsRequestsBack() {
        var rate = sending(100)
        _ = rate.answered(slowDown, startedAt: at(0), now: at(100), unitRandom: 0.5)
        XCTAssertEqual(rate.liftDue, at(10_100))
        XCTAssertFalse(rate.take(now: at(100)), "held back")
        XCTAssertEqual(rate.settle(now: at(10_099)), .none)
        XCTAssertEqual(rate.liftDue, at(10_100))
        XCTAssertTrue(rate.take(now: at(5_000)))
        XCTAssertEqual(rate.liftDue, at(10_100), "a request that went did not need the limit")
        var heldBack: Int64 = 0
        for ms in stride(from: Int64(5_000), to: 9_000, by: 1) where !rate.take(now: at(ms)) { heldBack = ms }
        XCTAssertGreaterThan(heldBack, 8_990, "a request a millisecond is more than 700/s")
        XCTAssertEqual(rate.liftDue, at(heldBack + 10_000), "10 s after the last request held back")
        XCTAssertEqual(rate.settle(now: at(heldBack + 9_999)), .none)
        XCTAssertEqual(rate.settle(now: at(heldBack + 10_000)), .lifted(since: at(100)))
        XCTAssertNil(rate.limit)
    }

    /// Retry-After: nothing starts before it (capped by the longest pause), and the limit is not
    /// lifted while it lasts.
    func testRetryAfter_pausesEveryRequest_cappedByTheLongestPause() {
        var rate = sending(10, settings: .init(maximumPauseSeconds: 60))
        _ = rate.answered(slowDown, startedAt: at(0), now: at(100), retryAfterSeconds: 30, unitRandom: 0.5)
        XCTAssertEqual(rate.pausedUntil, at(30_100))
        XCTAssertEqual(rate.nextStart(now: at(200)), at(30_100))
        XCTAssertFalse(rate.take(now: at(30_099)))
        XCTAssertEqual(rate.settle(now: at(35_000)), .none, "quiet counts from the end of the pause")
        XCTAssertTrue(rate.take(now: at(30_100)))

        _ = rate.answered(slowDown, startedAt: at(30_100), now: at(30_200), retryAfterSeconds: 3600, unitRandom: 0.5)
        XCTAssertEqual(rate.pausedUntil, at(90_200), "capped at 60 s")
        _ = rate.answered(slowDown, startedAt: at(0), now: at(30_300), retryAfterSeconds: 1, unitRandom: 0.5)
        XCTAssertEqual(rate.pausedUntil, at(90_200), "a shorter Retry-After does not shorten the pause")
    }

    func testGiveBack_returnsTheToken() {
        var rate = sending(100)
        _ = rate.answered(slowDown, startedAt: at(0), now: at(100), unitRandom: 0.5)
        let due = rate.nextStart(now: at(100))
        XCTAssertTrue(rate.take(now: due))
        XCTAssertFalse(rate.take(now: due))
        rate.giveBack(now: due)
        XCTAssertTrue(rate.take(now: due))
    }

    /// Three daemons (16 requests in flight each, 5 ms a request) against a store that accepts
    /// 300 requests a second (a bucket of 30) and answers the rest throttled, answers arriving
    /// in the same millisecond in a shuffled order: the rule keeps the store near its limit,
    /// gets fewer throttled answers than accepted ones, and gives each daemon a fair share.
    func testThreeDaemons_shareAThrottlingStore() {
        var fleet = FleetSimulation(seed: 31, settings: AdaptiveRequestRate.Settings())
        fleet.run(until: t0.adding(seconds: 10))
        let acceptedBefore = fleet.accepted.reduce(0, +)
        fleet.run(until: t0.adding(seconds: 20))
        let accepted = fleet.accepted
        let throttled = fleet.throttled.reduce(0, +)
        XCTAssertGreaterThan(Double(accepted.reduce(0, +) - acceptedBefore), 0.8 * 300 * 10, "the store kept busy: \(accepted)")
        XCTAssertLessThan(throttled, accepted.reduce(0, +) / 5, "throttled \(throttled), accepted \(accepted)")
        XCTAssertGreaterThan(Double(accepted.min()!), 0.6 * Double(accepted.max()!), "fair shares: \(accepted)")
        for daemon in fleet.daemons { XCTAssertNotNil(daemon.rate.limit, "still limited: the store's limit binds") }
    }

    /// The fleet in small: three daemons of 800 items each, starting 40 ms apart and
    /// starting at most two requests a millisecond (a daemon's own pace), drain into the same
    /// store. The store's limit allows 8 s: each of six runs ends within 9.6 s (1.2x), with
    /// fewer than 5 % of the answers throttled. A climb that does not steepen took up to 11.5 s:
    /// the shares the first cuts leave are unequal, and a daemon left alone climbs back slowly.
    func testThreeDaemonsDraining_finishWithinAFifthMoreThanTheStoreAllows() {
        for seed in UInt64(1)...6 {
            var fleet = FleetSimulation(seed: seed, settings: AdaptiveRequestRate.Settings(), items: 800, startsPerMillisecond: 2, stagger: 40)
            fleet.run(until: t0.adding(seconds: 60))
            let seconds = t0.seconds(until: fleet.now)
            XCTAssertEqual(fleet.left, [0, 0, 0], "seed \(seed)")
            XCTAssertLessThanOrEqual(seconds, 9.6, "seed \(seed)")
            XCTAssertLessThan(fleet.throttled.reduce(0, +), 120, "seed \(seed): \(fleet.throttled)")
        }
    }
}

/// Three daemons, each with its own `AdaptiveRequestRate`, 16 requests in flight at most, sending
/// to a store that accepts `perSecond` requests a second (a bucket of a tenth of a second's) and
/// throttles the rest, each request answered 5 ms after it starts (3-8 ms when `items` is set). A
/// throttled request goes back to its daemon's queue. One millisecond at a time, the daemons in a
/// seeded random order.
struct FleetSimulation {
    struct Daemon {
        var rate: AdaptiveRequestRate
        var left: Int?
        var inFlight: [(startedAt: Timestamp, answerAt: Timestamp)] = []
        var accepted = 0
        var throttled = 0
    }

    var daemons: [Daemon]
    var now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    private let start = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    private var random: SplitMix
    private var storeTokens: Double
    private let perSecond: Double
    private let startsPerMillisecond: Int
    private let stagger: Int64
    private let varied: Bool

    init(
        seed: UInt64, settings: AdaptiveRequestRate.Settings, perSecond: Double = 300, items: Int? = nil,
        startsPerMillisecond: Int = .max, stagger: Int64 = 0
    ) {
        daemons = (0..<3).map { _ in Daemon(rate: AdaptiveRequestRate(settings: settings), left: items) }
        random = SplitMix(seed: seed)
        (self.perSecond, storeTokens) = (perSecond, max(1, perSecond / 10))
        (self.startsPerMillisecond, self.stagger, varied) = (startsPerMillisecond, stagger, items != nil)
    }

    var accepted: [Int] { daemons.map(\.accepted) }
    var throttled: [Int] { daemons.map(\.throttled) }
    var left: [Int] { daemons.map { $0.left ?? 0 } }

    /// Runs until `end`, or until every daemon's items are all accepted.
    mutating func run(until end: Timestamp) {
        while now < end && daemons.contains(where: { $0.left != 0 }) {
            storeTokens = min(max(1, perSecond / 10), storeTokens + perSecond / 1000)
            for d in daemons.indices.shuffled(using: &random) where now >= start.adding(milliseconds: Int64(d) * stagger) {
                var daemon = daemons[d]
                let due = daemon.inFlight.filter { $0.answerAt <= now }
                daemon.inFlight.removeAll { $0.answerAt <= now }
                for request in due {
                    if storeTokens >= 1 {
                        storeTokens -= 1
                        daemon.accepted += 1
                        daemon.left = daemon.left.map { $0 - 1 }
                        _ = daemon.rate.answered(.accepted, startedAt: request.startedAt, now: now, unitRandom: random.unit())
                    } else {
                        daemon.throttled += 1
                        _ = daemon.rate.answered(
                            .throttled(reason: "HTTP 503: S3 SlowDown"), startedAt: request.startedAt, now: now, unitRandom: random.unit())
                    }
                }
                var started = 0
                while daemon.inFlight.count < 16, (daemon.left ?? .max) > daemon.inFlight.count, started < startsPerMillisecond,
                      daemon.rate.take(now: now)
                {
                    let latency: Int64 = varied ? 3 + Int64(random.unit() * 6) : 5
                    daemon.inFlight.append((now, now.adding(milliseconds: latency)))
                    started += 1
                }
                daemons[d] = daemon
            }
            now = now.adding(milliseconds: 1)
        }
    }
}

/// A small seeded generator (SplitMix64), so the simulation is the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
