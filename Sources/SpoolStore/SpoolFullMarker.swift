import Foundation
import SpoolCore
import SpoolSystem

/// `SPOOL/size-limit`: present while the daemon's queue is at its `--max-spool-size`, so
/// `spoold status` can say the spool is full without talking to the daemon.
///
/// Like `SPOOL/outage`: written to tmp/ and renamed into place, not fsynced, removed when the
/// queue has room again and when a daemon starts or stops.
///
/// ```json
/// {"limitBytes": 500000000, "queuedBytes": 500012345, "since": "2026-11-21T14:10:03.123Z", "whenFull": "block"}
/// ```
public enum SpoolFullMarker {
    public static let fileName = "size-limit"

    public struct Contents: Equatable, Sendable {
        public var since: Timestamp
        public var limitBytes: Int64
        public var queuedBytes: Int64
        public var whenFull: String

        public init(since: Timestamp, limitBytes: Int64, queuedBytes: Int64, whenFull: String) {
            (self.since, self.limitBytes, self.queuedBytes, self.whenFull) = (since, limitBytes, queuedBytes, whenFull)
        }
    }

    /// Replaces the marker atomically (open in tmp/, write, rename over `SPOOL/size-limit`).
    public static func write(_ contents: Contents, in spool: Spool) throws {
        let object: [String: Any] = [
            "since": contents.since.iso8601, "limitBytes": contents.limitBytes, "queuedBytes": contents.queuedBytes,
            "whenFull": contents.whenFull,
        ]
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
              let limit = (object["limitBytes"] as? NSNumber)?.int64Value
        else { return nil }
        return Contents(
            since: since, limitBytes: limit, queuedBytes: (object["queuedBytes"] as? NSNumber)?.int64Value ?? 0,
            whenFull: object["whenFull"] as? String ?? "block")
    }
}
