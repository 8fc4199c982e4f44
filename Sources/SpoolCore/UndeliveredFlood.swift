/// Finds a connection that keeps receiving bytes nobody hands spoold: the body of a redirect,
/// which FoundationNetworking collects itself (301–308 bodies are kept for the case the redirect
/// is not followed, never passed to the delegate), so the 1 MiB cut of answers never sees it.
/// An endless one grew the daemon by ~3 MiB a second until `--timeout`.
///
/// Compares samples of every connection's received bytes (`TCP_INFO`), in windows of at least
/// `windowSeconds`, with the answer bytes URLSession handed over in the same window. A
/// connection is suspect once it received at least `minimumBytesPerSecond` in one window and
/// more than twice what was handed over (plus 64 KiB for headers), and is named if it still
/// receives undelivered bytes in the next window, at a 16th of that rate (Foundation takes such
/// a body in ever more slowly: it copies the whole body for every piece it adds). Legitimate
/// answers, however many and fast, are handed over and so never count (the rate alone did not
/// tell a flood from 1,500 answers a second of 4 KB of JSON).
public struct UndeliveredFlood: Sendable {
    /// Shortest window compared by default; a sample sooner than this after the last is skipped.
    public static let defaultWindowSeconds = 0.9
    /// Shortest window compared (`defaultWindowSeconds`; shorter in tests).
    public let windowSeconds: Double
    /// Allowance per window for what is received and never handed over in any answer: headers.
    public static let headerAllowance: UInt64 = 64 << 10
    private var last: (sample: [Int32: UInt64], delivered: UInt64, seconds: Double)?
    private var suspect: Int32?

    public init(windowSeconds: Double = UndeliveredFlood.defaultWindowSeconds) { self.windowSeconds = windowSeconds }

    /// Takes the next sample (received bytes by descriptor; answer bytes handed over so far, at
    /// `seconds` on a monotonic clock); returns the descriptor to abort, if any.
    public mutating func observe(
        _ sample: [Int32: UInt64], delivered: UInt64, at seconds: Double, minimumBytesPerSecond: Double
    ) -> Int32? {
        if let last, seconds >= last.seconds, seconds - last.seconds < windowSeconds { return nil }
        defer { last = (sample, delivered, seconds) }
        guard let last, seconds > last.seconds, delivered >= last.delivered else {
            suspect = nil
            return nil
        }
        let window = seconds - last.seconds
        let handedOver = delivered - last.delivered
        func undelivered(_ fd: Int32) -> UInt64? {
            guard let then = last.sample[fd], let now = sample[fd], now >= then else { return nil }
            let received = now - then
            return received > 2 * handedOver + UndeliveredFlood.headerAllowance ? received : nil
        }
        if let suspect, let received = undelivered(suspect), Double(received) / window >= minimumBytesPerSecond / 16 {
            self.suspect = nil
            return suspect
        }
        suspect = sample.keys.compactMap { fd in undelivered(fd).map { (fd, $0) } }
            .filter { Double($0.1) / window >= minimumBytesPerSecond }
            .max { $0.1 < $1.1 }?.0
        return nil
    }
}
