/// How many requests a second the daemon may start while the endpoint throttles it: additive
/// increase, multiplicative decrease (TCP's congestion avoidance; the AWS SDKs' adaptive retry
/// mode is the model), kept as a token bucket that every request takes one token from. One rate
/// for the whole daemon, single PUTs and multipart parts alike: throttling is the store asking the
/// client for less, never a verdict on one item. Pure: the caller passes the time and the
/// randomness.
///
/// - **Open** (the usual state): no limit, `--concurrency` alone bounds the requests.
/// - **The first throttled answer** limits the rate to a random 0.6–0.8 of what the daemon was
///   sending (the requests it started in the last second), never below `floor`.
/// - **Each further throttled answer** cuts the rate by such a factor again, down to `floor`,
///   unless its request started before the last cut (or in its millisecond): that one was sent
///   at the old rate and says nothing new (TCP cuts once per window, not once per lost segment).
/// - **Each accepted answer** to a request started after the last cut raises the rate by the
///   seconds since the last raise (at most one second's worth per answer) times the climb: while
///   every request succeeds, the rate climbs by `increasePerSecond` in the first second after the
///   last throttled answer, by twice that in the next, three times in the third... (so capacity a
///   store frees, when other daemons are done, is taken up within seconds, not minutes), up to a
///   ceiling of twice what the daemon actually sent in the last second (the AWS SDKs' cap: a
///   daemon that sends less than it may, its queue empty or its slots full, saves up no
///   allowance). The increase depends on time alone, the same for every daemon, and the decrease
///   is proportional, so daemons sharing a store converge on equal shares (AIMD's fairness).
/// - **Jitter.** Each cut's factor is random, and after a cut the next token comes after a random
///   one to two token intervals, so daemons throttled by the same burst do not cut, pause and
///   climb in step.
/// - **`Retry-After`** on a throttled answer: no request starts before then (at most
///   `maximumPauseSeconds`).
/// - **Lifted** once `quietSeconds` pass with no throttled answer and no request held back by the
///   limit: it no longer limits anything.
///
/// Tokens accrue at the rate up to `burstSeconds` of it (at least one): a limited daemon sends
/// smoothly, not in bursts that a store's own bucket would refuse.
public struct AdaptiveRequestRate: Equatable, Sendable {
    public struct Settings: Equatable, Sendable {
        /// Lowest rate, requests per second (the AWS SDKs' minimum fill rate).
        public var floor: Double
        /// Requests per second gained per second while requests succeed.
        public var increasePerSecond: Double
        /// A cut multiplies the rate by a random factor in `lowestFactor..<highestFactor`.
        public var lowestFactor: Double
        public var highestFactor: Double
        /// A limit that held nothing back and met no throttle for this long is lifted.
        public var quietSeconds: Double
        /// Tokens a quiet spell may save, in seconds of the rate (at least one token).
        public var burstSeconds: Double
        /// Longest pause a `Retry-After` may impose (`--max-backoff`).
        public var maximumPauseSeconds: Double
        /// The climb steepens by `increasePerSecond` every this many seconds without a throttled
        /// answer (`AdaptiveRequestRateTests`: in a seeded simulation of three daemons draining
        /// into one store, a steady climb took up to 1.44x the store's time, this one 1.16x).
        public var accelerationSeconds: Double = 1

        public init(
            floor: Double = 0.5, increasePerSecond: Double = 10, lowestFactor: Double = 0.6, highestFactor: Double = 0.8,
            quietSeconds: Double = 10, burstSeconds: Double = 0.05, maximumPauseSeconds: Double = 300
        ) {
            precondition(floor > 0 && increasePerSecond >= 0 && 0 < lowestFactor && lowestFactor <= highestFactor && highestFactor < 1)
            (self.floor, self.increasePerSecond, self.lowestFactor, self.highestFactor) = (floor, increasePerSecond, lowestFactor, highestFactor)
            (self.quietSeconds, self.burstSeconds, self.maximumPauseSeconds) = (max(0, quietSeconds), max(0, burstSeconds), max(0, maximumPauseSeconds))
        }
    }

    /// The limit in force, while the endpoint throttles.
    public struct Limit: Equatable, Sendable {
        /// Requests per second allowed now.
        public fileprivate(set) var rate: Double
        /// When the first throttled answer came.
        public let since: Timestamp
        /// What the last throttled answer said (`HTTP 503: S3 SlowDown`).
        public fileprivate(set) var reason: String
        fileprivate var tokens: Double
        fileprivate var refilled: Timestamp
        fileprivate var lastCut: Timestamp
        fileprivate var lastRaise: Timestamp
        fileprivate var lastThrottled: Timestamp
        fileprivate var lastHeldBack: Timestamp?
    }

    /// How an answer bears on the rate.
    public enum Answer: Equatable, Sendable {
        /// A 2xx.
        case accepted
        /// The endpoint asked for fewer requests; `reason` is what it said.
        case throttled(reason: String)
        /// Anything else (a failure, an outage): no bearing.
        case other
    }

    /// What an event changed, for the log.
    public enum Change: Equatable, Sendable {
        case none
        /// The first throttled answer: requests are limited to `rate` per second from now.
        case limited(rate: Double)
        /// A further throttled answer cut the rate to `rate`.
        case cut(rate: Double)
        /// The limit that began at `since` is lifted.
        case lifted(since: Timestamp)
    }

    public let settings: Settings
    /// The limit in force; nil while open.
    public private(set) var limit: Limit?
    /// No request starts before this (a throttled answer's `Retry-After`).
    public private(set) var pausedUntil: Timestamp?
    /// Throttled answers since the start, for the metrics.
    public private(set) var throttledAnswers = 0
    private var sent = SendMeter()

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// Whether a request may start at `now`, taking its token if so. A refusal notes that the
    /// limit held a request back (so it is not lifted as unused).
    public mutating func take(now: Timestamp) -> Bool {
        _ = settle(now: now)
        if let pausedUntil, now < pausedUntil {
            limit?.lastHeldBack = now
            return false
        }
        guard var limit else {
            sent.count(at: now)
            return true
        }
        refill(&limit, now: now)
        guard limit.tokens >= 1 - 1e-9 else {
            limit.lastHeldBack = now
            self.limit = limit
            return false
        }
        limit.tokens -= 1
        self.limit = limit
        sent.count(at: now)
        return true
    }

    /// Returns a token taken for a request that was not sent after all.
    public mutating func giveBack(now: Timestamp) {
        sent.uncount(at: now)
        guard var limit else { return }
        refill(&limit, now: now)
        limit.tokens = min(burst(limit.rate), limit.tokens + 1)
        self.limit = limit
    }

    /// The earliest time `take` can grant a token: `now` or earlier when it can now.
    public func nextStart(now: Timestamp) -> Timestamp {
        var earliest = max(now, pausedUntil ?? now)
        if var limit {
            refill(&limit, now: now)
            if limit.tokens < 1 - 1e-9 {
                // Rounded up to the millisecond, so a wake-up at that time finds the token there.
                let milliseconds = ((1 - limit.tokens) / limit.rate * 1000).rounded(.up)
                earliest = max(earliest, now.adding(milliseconds: Int64(milliseconds)))
            }
        }
        return earliest
    }

    /// When the limit will be lifted as unused if nothing throttles or is held back before then.
    public var liftDue: Timestamp? {
        guard let limit else { return nil }
        var quietFrom = max(limit.lastThrottled, limit.lastHeldBack ?? limit.since)
        if let pausedUntil { quietFrom = max(quietFrom, pausedUntil) }
        return quietFrom.adding(seconds: settings.quietSeconds)
    }

    /// Lifts a limit that has been quiet for `quietSeconds` (see `liftDue`).
    public mutating func settle(now: Timestamp) -> Change {
        guard let limit, let due = liftDue, now >= due else { return .none }
        lift()
        return .lifted(since: limit.since)
    }

    /// An answer to a request started at `startedAt` arrived at `now`.
    /// - Parameters:
    ///   - retryAfterSeconds: a throttled answer's `Retry-After`.
    ///   - unitRandom: in `[0, 1)`, for the jitter of a cut.
    public mutating func answered(
        _ answer: Answer, startedAt: Timestamp, now: Timestamp, retryAfterSeconds: Double? = nil, unitRandom: Double
    ) -> Change {
        let settled = settle(now: now)
        switch answer {
        case .other:
            return settled
        case .accepted:
            guard var limit, startedAt > limit.lastCut else { return settled }
            let seconds = min(1, max(0, limit.lastRaise.seconds(until: now)))
            let ceiling = max(settings.floor, 2 * sent.rate(at: now))
            // The longer nothing is throttled, the steeper the climb: the increase a second in the
            // first second after a throttled answer, twice it in the next, and so on.
            let steepness = 1 + max(0, limit.lastThrottled.seconds(until: now)) / settings.accelerationSeconds
            limit.rate = max(limit.rate, min(ceiling, limit.rate + settings.increasePerSecond * steepness * seconds))
            limit.lastRaise = max(limit.lastRaise, now)
            self.limit = limit
            return settled
        case .throttled(let reason):
            throttledAnswers += 1
            if let seconds = retryAfterSeconds {
                let until = now.adding(seconds: min(max(0, seconds), settings.maximumPauseSeconds))
                pausedUntil = max(pausedUntil ?? until, until)
            }
            let r = min(max(unitRandom, 0), 0.999_999)
            let factor = settings.lowestFactor + (settings.highestFactor - settings.lowestFactor) * r
            guard var limit else {
                let sending = max(settings.floor, sent.rate(at: now))
                let rate = max(settings.floor, sending * factor)
                self.limit = Limit(
                    rate: rate, since: now, reason: reason, tokens: -r, refilled: now, lastCut: now, lastRaise: now,
                    lastThrottled: now)
                return .limited(rate: rate)
            }
            limit.lastThrottled = max(limit.lastThrottled, now)
            limit.reason = reason
            guard startedAt > limit.lastCut else {
                self.limit = limit
                return .none
            }
            refill(&limit, now: now)
            limit.rate = max(settings.floor, limit.rate * factor)
            limit.tokens = min(limit.tokens, 0) - r
            limit.lastCut = now
            limit.lastRaise = now
            self.limit = limit
            return .cut(rate: limit.rate)
        }
    }

    private mutating func lift() {
        limit = nil
        pausedUntil = nil
    }

    private func burst(_ rate: Double) -> Double { max(1, rate * settings.burstSeconds) }

    /// Adds the tokens accrued since the last refill (a clock that stepped back adds none).
    private func refill(_ limit: inout Limit, now: Timestamp) {
        guard now > limit.refilled else { return }
        limit.tokens = min(burst(limit.rate), limit.tokens + limit.refilled.seconds(until: now) * limit.rate)
        limit.refilled = now
    }
}

/// Requests started in the last second, in ten slots of 100 ms: what the daemon was sending
/// when the first throttled answer came, and twice it the ceiling of the rate.
struct SendMeter: Equatable, Sendable {
    private static let slotMilliseconds: Int64 = 100
    private static let slotCount = 10
    private var counts = [Int](repeating: 0, count: SendMeter.slotCount)
    /// The slot (milliseconds / 100) of the newest count; nil before the first.
    private var newest: Int64?

    mutating func count(at now: Timestamp) {
        let slot = advance(to: now)
        counts[index(slot)] += 1
    }

    mutating func uncount(at now: Timestamp) {
        let slot = advance(to: now)
        counts[index(slot)] = max(0, counts[index(slot)] - 1)
    }

    /// Requests a second over the slots of the last second that hold any, from the oldest of
    /// them to `now` (at least one slot's length): a daemon that started 48 requests in its first
    /// 50 ms was sending 480 a second, not 48.
    func rate(at now: Timestamp) -> Double {
        guard let newest else { return 0 }
        let current = now.millisecondsSinceEpoch / SendMeter.slotMilliseconds
        var total = 0
        var oldest: Int64?
        for slot in (current - Int64(SendMeter.slotCount) + 1)...current where slot <= newest && newest - slot < Int64(SendMeter.slotCount) {
            let n = counts[index(slot)]
            guard n > 0 else { continue }
            total += n
            oldest = oldest ?? slot
        }
        guard let oldest else { return 0 }
        let covered = max(Double(SendMeter.slotMilliseconds), Double(now.millisecondsSinceEpoch - oldest * SendMeter.slotMilliseconds))
        return Double(total) / (covered / 1000)
    }

    /// Makes `now`'s slot the newest, clearing the slots skipped since; returns it.
    private mutating func advance(to now: Timestamp) -> Int64 {
        let slot = now.millisecondsSinceEpoch / SendMeter.slotMilliseconds
        guard let last = newest else {
            newest = slot
            return slot
        }
        if slot > last {
            for skipped in (last + 1)...min(slot, last + Int64(SendMeter.slotCount)) { counts[index(skipped)] = 0 }
            newest = slot
        }
        // A clock that stepped back counts in the newest slot.
        return max(slot, last)
    }

    private func index(_ slot: Int64) -> Int {
        Int(((slot % Int64(SendMeter.slotCount)) + Int64(SendMeter.slotCount)) % Int64(SendMeter.slotCount))
    }
}
