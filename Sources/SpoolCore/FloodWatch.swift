/// Watches the connections' received bytes from one sample to the next, in windows of at least
/// `windowSeconds`, and names a connection once it received at `suspectBytesPerSecond` or more
/// in one window (the fastest such, `FloodingConnection`) and was still receiving, at
/// `confirmBytesPerSecond` or more, in the next: a sustained flood, not one answer's burst.
/// Every answer spoold keeps is cut at 1 MiB and the ones it expects are far smaller, so a
/// connection of an uploader does that only when a server floods it where the cut does not see
/// (a redirect's body, which FoundationNetworking collects itself, ever more slowly as it grows:
/// hence the lower rate that confirms).
public struct FloodWatch: Sendable {
    /// Shortest window compared; a sample sooner than this after the last is skipped (a little
    /// under the sweeper's 1 s, so its jitter does not skip every other sweep).
    public static let windowSeconds = 0.9
    private var last: (sample: [Int32: UInt64], seconds: Double)?
    private var suspect: Int32?

    public init() {}

    /// Takes the next sample (received bytes by descriptor, at `seconds` on a monotonic clock);
    /// returns the descriptor to abort, if any.
    public mutating func observe(
        _ sample: [Int32: UInt64], at seconds: Double, suspectBytesPerSecond: Double, confirmBytesPerSecond: Double
    ) -> Int32? {
        if let last, seconds >= last.seconds, seconds - last.seconds < FloodWatch.windowSeconds { return nil }
        defer { last = (sample, seconds) }
        guard let last, seconds > last.seconds else {
            suspect = nil
            return nil
        }
        let window = seconds - last.seconds
        if let suspect, let then = last.sample[suspect], let now = sample[suspect], now >= then,
           Double(now - then) / window >= confirmBytesPerSecond
        {
            self.suspect = nil
            return suspect
        }
        suspect = FloodingConnection.pick(
            before: last.sample, after: sample, seconds: window, minimumBytesPerSecond: suspectBytesPerSecond)
        return nil
    }
}
