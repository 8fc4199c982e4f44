import Foundation
import SpoolCore
import SpoolSystem

/// `SPOOL/size-limit`: present while the daemon's queue is at its `--max-spool-size` (the disk
/// its items take) or its `--max-items`, so `spoold status` can say the spool is full without
/// talking to the daemon. Each limit's fields are there only when the daemon has that limit.
///
/// Like `SPOOL/outage`: written to tmp/ and renamed into place, not fsynced, removed when the
/// queue has room again and when a daemon starts or stops.
///
/// ```json
/// {"limitBytes": 500000000, "queuedBytes": 500012345, "since": "2026-11-21T14:10:03.123Z", "whenFull": "block"}
/// {"limitItems": 100000, "queuedItems": 100000, "since": "2026-11-21T14:10:03.123Z", "whenFull": "block"}
/// ```
public enum SpoolFullMarker {
    public static let fileName = "size-limit"

    public struct Contents: Equatable, Sendable {
        public var since: Timestamp
        /// `--max-spool-size` and the disk the queue took when it became full.
        public var limitBytes: Int64?
        public var queuedBytes: Int64
        public var whenFull: String
        /// `--max-items` and the items queued when it became full.
        public var limitItems: Int?
        public var queuedItems: Int?

        public init(
            since: Timestamp, limitBytes: Int64?, queuedBytes: Int64, whenFull: String, limitItems: Int? = nil, queuedItems: Int? = nil
        ) {
            (self.since, self.limitBytes, self.queuedBytes, self.whenFull) = (since, limitBytes, queuedBytes, whenFull)
            (self.limitItems, self.queuedItems) = (limitItems, queuedItems)
        }
    }

    /// Replaces the marker atomically (open in tmp/, write, rename over `SPOOL/size-limit`).
    public static func write(_ contents: Contents, in spool: Spool) throws {
        var object: [String: Any] = ["since": contents.since.iso8601, "whenFull": contents.whenFull]
        if let limit = contents.limitBytes {
            object["limitBytes"] = limit
            object["queuedBytes"] = contents.queuedBytes
        }
        if let limit = contents.limitItems {
            object["limitItems"] = limit
            object["queuedItems"] = contents.queuedItems ?? 0
        }
        try AdvisoryFile.replace(fileName, with: object, in: spool)
    }

    /// Removes the marker; a missing one is fine.
    public static func remove(in spool: Spool) {
        AdvisoryFile.remove(fileName, in: spool)
    }

    /// The marker's contents, or nil when there is none (or it cannot be read).
    public static func read(in spool: Spool) -> Contents? {
        guard let object = AdvisoryFile.read(fileName, in: spool),
              let sinceText = object["since"] as? String, let since = Timestamp(iso8601: sinceText)
        else { return nil }
        let limitBytes = (object["limitBytes"] as? NSNumber)?.int64Value
        let limitItems = (object["limitItems"] as? NSNumber)?.intValue
        guard limitBytes != nil || limitItems != nil else { return nil }
        return Contents(
            since: since, limitBytes: limitBytes, queuedBytes: (object["queuedBytes"] as? NSNumber)?.int64Value ?? 0,
            whenFull: object["whenFull"] as? String ?? "block", limitItems: limitItems,
            queuedItems: (object["queuedItems"] as? NSNumber)?.intValue)
    }
}
