/// What `spoold drain` shows on a terminal, as one line redrawn in place:
/// `12/40 items, 3.1/10.0 MiB, 1.2 MiB/s, ETA 6s, 2 retries waiting`.
public struct DrainProgress: Equatable, Sendable {
    /// Redraws at most this often (four a second): enough to look alive, cheap on a slow terminal.
    public static let minimumRedrawSeconds = 0.25
    /// Carriage return and "erase to end of line": the next text replaces the line in place.
    public static let redrawPrefix = "\r\u{1B}[K"

    public var itemsDone = 0
    public var itemsTotal = 0
    public var bytesDone: Int64 = 0
    public var bytesTotal: Int64 = 0
    public var elapsedSeconds = 0.0
    public var retriesWaiting = 0
    public var paused = false
    /// Requests a second allowed while the endpoint throttles; nil when not limited.
    public var throttledRate: Double?
    /// Outside the upload windows: when the next opens, on the local clock (`22:00`).
    public var heldUntil: String?

    public init() {}

    /// Bytes per second since the drain started, nil before anything was done.
    public var bytesPerSecond: Double? {
        guard elapsedSeconds > 0, bytesDone > 0 else { return nil }
        return Double(bytesDone) / elapsedSeconds
    }

    /// Seconds left at the rate so far (by bytes, or by items when the items are empty).
    public var etaSeconds: Double? {
        guard elapsedSeconds > 0 else { return nil }
        if bytesDone > 0 { return Double(max(0, bytesTotal - bytesDone)) / (Double(bytesDone) / elapsedSeconds) }
        if itemsDone > 0, bytesTotal == 0 { return Double(max(0, itemsTotal - itemsDone)) / (Double(itemsDone) / elapsedSeconds) }
        return nil
    }

    public var text: String {
        var parts = ["\(itemsDone)/\(itemsTotal) items", "\(ByteText.format(bytesDone))/\(ByteText.format(bytesTotal))"]
        parts.append(bytesPerSecond.map { "\(ByteText.format(Int64($0)))/s" } ?? "-/s")
        if let heldUntil {
            parts.append("paused until \(heldUntil) (upload window)")
        } else if paused {
            parts.append("endpoint unreachable, paused")
        } else {
            parts.append("ETA " + (etaSeconds.map(DrainProgress.duration) ?? "-"))
        }
        if let rate = throttledRate, !paused, heldUntil == nil {
            parts.append("throttled to \(rate >= 100 ? "\(Int(rate.rounded()))" : "\((rate * 10).rounded() / 10)") requests/s")
        }
        if retriesWaiting > 0 { parts.append(retriesWaiting == 1 ? "1 retry waiting" : "\(retriesWaiting) retries waiting") }
        return parts.joined(separator: ", ")
    }

    /// `42s`, `3m05s`, `2h10m`.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(s % 60 < 10 ? "0" : "")\(s % 60)s" }
        return "\(s / 3600)h\((s % 3600) / 60 < 10 ? "0" : "")\((s % 3600) / 60)m"
    }
}
