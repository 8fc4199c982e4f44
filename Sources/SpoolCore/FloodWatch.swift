/// Watches the connections' received bytes from one sample to the next and names a connection
/// once it has been the flooded one (`FloodingConnection`) in two windows in a row, each at least
/// `windowSeconds` long: a sustained flood, not one answer's burst. Every answer spoold keeps is
/// cut at 1 MiB, so no connection of an uploader receives 1 MiB/s for about two seconds unless a server
/// floods it where the cut does not see (a redirect's body, which FoundationNetworking collects
/// itself).
public struct FloodWatch: Sendable {
    /// Shortest window compared; a sample sooner than this after the last is skipped (a little
    /// under the sweeper's 1 s, so its jitter does not skip every other sweep).
    public static let windowSeconds = 0.9
    private var last: (sample: [Int32: UInt64], seconds: Double)?
    private var suspect: Int32?

    public init() {}

    /// Takes the next sample (received bytes by descriptor, at `seconds` on a monotonic clock);
    /// returns the descriptor to abort, if any.
    public mutating func observe(_ sample: [Int32: UInt64], at seconds: Double, minimumBytesPerSecond: Double) -> Int32? {
        if let last, seconds >= last.seconds, seconds - last.seconds < FloodWatch.windowSeconds { return nil }
        defer { last = (sample, seconds) }
        guard let last, seconds > last.seconds else {
            suspect = nil
            return nil
        }
        let flooded = FloodingConnection.pick(
            before: last.sample, after: sample, seconds: seconds - last.seconds, minimumBytesPerSecond: minimumBytesPerSecond)
        defer { suspect = flooded }
        guard let flooded, flooded == suspect else { return nil }
        return flooded
    }
}
