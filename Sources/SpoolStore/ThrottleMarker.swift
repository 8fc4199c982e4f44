import Foundation
import SpoolCore
import SpoolSystem

/// `SPOOL/throttled`: present while the endpoint throttles the daemon and its requests are
/// limited (`AdaptiveRequestRate`), so `spoold status` can show the rate without talking to it.
///
/// Like `SPOOL/outage`: written to tmp/ and renamed into place, not fsynced; rewritten at most
/// once a second while the rate changes, removed when the limit is lifted and when a daemon
/// starts or stops.
///
/// ```json
/// {"ratePerSecond": 97.5, "reason": "HTTP 503: S3 SlowDown", "since": "2026-11-21T14:10:03.123Z", "throttledAnswers": 212, "updated": "2026-11-21T14:10:41.007Z"}
/// ```
/// With `"pausedUntil"` while a `Retry-After` holds every request back.
public enum ThrottleMarker {
    public static let fileName = "throttled"

    public struct Contents: Equatable, Sendable {
        /// When the limit began (the first throttled answer).
        public var since: Timestamp
        /// Requests per second allowed as of `updated`.
        public var ratePerSecond: Double
        /// What the last throttled answer said.
        public var reason: String
        /// Throttled answers since the daemon started.
        public var throttledAnswers: Int
        public var updated: Timestamp
        public var pausedUntil: Timestamp?

        public init(
            since: Timestamp, ratePerSecond: Double, reason: String, throttledAnswers: Int, updated: Timestamp,
            pausedUntil: Timestamp? = nil
        ) {
            (self.since, self.ratePerSecond, self.reason) = (since, ratePerSecond, reason)
            (self.throttledAnswers, self.updated, self.pausedUntil) = (throttledAnswers, updated, pausedUntil)
        }
    }

    /// Replaces the marker atomically (open in tmp/, write, rename over `SPOOL/throttled`).
    public static func write(_ contents: Contents, in spool: Spool) throws {
        var object: [String: Any] = [
            "since": contents.since.iso8601, "ratePerSecond": (contents.ratePerSecond * 10).rounded() / 10,
            "reason": String(contents.reason.prefix(512)), "throttledAnswers": contents.throttledAnswers,
            "updated": contents.updated.iso8601,
        ]
        if let pausedUntil = contents.pausedUntil { object["pausedUntil"] = pausedUntil.iso8601 }
        try AdvisoryFile.replace(fileName, with: object, in: spool)
    }

    /// Removes the marker; a missing one is fine.
    public static func remove(in spool: Spool) {
        AdvisoryFile.remove(fileName, in: spool)
    }

    /// The marker's contents, or nil when there is none (or it cannot be read).
    public static func read(in spool: Spool) -> Contents? {
        guard let object = AdvisoryFile.read(fileName, in: spool),
              let sinceText = object["since"] as? String, let since = Timestamp(iso8601: sinceText),
              let rate = (object["ratePerSecond"] as? NSNumber)?.doubleValue, rate.isFinite, rate >= 0
        else { return nil }
        let updated = (object["updated"] as? String).flatMap(Timestamp.init(iso8601:)) ?? since
        return Contents(
            since: since, ratePerSecond: rate, reason: object["reason"] as? String ?? "unknown",
            throttledAnswers: (object["throttledAnswers"] as? NSNumber)?.intValue ?? 0, updated: updated,
            pausedUntil: (object["pausedUntil"] as? String).flatMap(Timestamp.init(iso8601:)))
    }
}
