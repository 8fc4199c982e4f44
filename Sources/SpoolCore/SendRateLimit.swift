/// `--limit-rate` for a transport that meters its own body reads (URLSession): a token bucket
/// shared by every upload of the daemon. Pure: the caller passes the time (monotonic seconds).
///
/// The bucket holds at most `burst` bytes, 50 ms of the rate. A read is granted only once the
/// bucket holds all it asks for, or a full bucket: reads stay as large as the rate allows (each
/// one costs URLSession a callback's worth of CPU, about half a millisecond, whatever its size),
/// and a reader waits at most about 50 ms, so every upload keeps being read (the stall watch
/// would take a body left unread for seconds for a lost write event).
public struct SendRateLimit: Sendable {
    public private(set) var bytesPerSecond: Double
    public private(set) var burst: Double
    private var tokens: Double
    private var last: Double?

    /// - Parameter bytesPerSecond: at least 1.
    public init(bytesPerSecond: Int64) {
        self.bytesPerSecond = Double(max(1, bytesPerSecond))
        burst = max(1, (self.bytesPerSecond * 0.05).rounded(.down))
        tokens = burst
    }

    /// Sets a new rate (a `--limit-rate` timetable changed it): the bucket keeps what it holds,
    /// up to the new rate's 50 ms.
    public mutating func change(bytesPerSecond: Int64) {
        self = SendRateLimit(bytesPerSecond: bytesPerSecond, tokens: tokens, last: last)
    }

    private init(bytesPerSecond: Int64, tokens: Double, last: Double?) {
        self.init(bytesPerSecond: bytesPerSecond)
        self.tokens = min(burst, tokens)
        self.last = last
    }

    /// Seconds a full bucket lasts: the longest a read waits for its bytes (50 ms, or one
    /// byte's time at under 20 bytes a second).
    public var turnSeconds: Double { burst / bytesPerSecond }

    /// Takes `wanted` bytes from the bucket (after adding what accrued since the last call), or
    /// a full bucket when `wanted` is more: how many may be sent now, 0 while fewer are due.
    public mutating func take(upTo wanted: Int, now: Double) -> Int {
        refill(now: now)
        let granted = min(Double(max(0, wanted)), burst)
        guard tokens >= granted else { return 0 }
        tokens -= granted
        return Int(granted)
    }

    /// Puts back bytes taken but not sent (a read that found less than it was granted).
    public mutating func giveBack(_ bytes: Int) {
        tokens = min(burst, tokens + Double(max(0, bytes)))
    }

    /// Seconds from `now` until `take(upTo: wanted)` grants something.
    public func secondsUntilDue(_ wanted: Int, now: Double) -> Double {
        var bucket = self
        bucket.refill(now: now)
        return max(0, min(Double(max(0, wanted)), burst) - bucket.tokens) / bytesPerSecond
    }

    /// Adds what accrued since the last call (a clock that stepped back adds nothing).
    private mutating func refill(now: Double) {
        if let last, now > last { tokens = min(burst, tokens + (now - last) * bytesPerSecond) }
        last = max(last ?? now, now)
    }
}
