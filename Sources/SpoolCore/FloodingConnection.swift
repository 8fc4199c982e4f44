/// Which connection a server is flooding, from two samples of every TCP connection's received
/// bytes (by descriptor) taken `seconds` apart: the one that received the most in between, if
/// it came at `minimumBytesPerSecond` or more. A descriptor missing from either sample, or whose
/// count went down (closed and reused meanwhile), is not a candidate.
public enum FloodingConnection {
    public static func pick(
        before: [Int32: UInt64], after: [Int32: UInt64], seconds: Double, minimumBytesPerSecond: Double
    ) -> Int32? {
        var best: (fd: Int32, bytes: UInt64)?
        for fd in after.keys.sorted() {
            guard let then = before[fd], let now = after[fd], now >= then else { continue }
            if now - then > (best?.bytes ?? 0) { best = (fd, now - then) }
        }
        guard let best, seconds > 0, Double(best.bytes) / seconds >= minimumBytesPerSecond else { return nil }
        return best.fd
    }
}
