import Foundation
import SpoolCore
import SpoolSystem

/// `SPOOL/counts`: a running daemon's figures for its queue, so `spoold status` answers at once
/// however many items wait, without reading pending/ (a million names take a second to list,
/// and their sizes many more to stat). The daemon keeps them as running sums (`QueueBytes`).
///
/// Like `SPOOL/outage`: one line of JSON, written in tmp/ and renamed into place, not fsynced;
/// rewritten at most once a second while the figures change; removed when a daemon starts and
/// stops, and ignored by `status` unless the daemon holding the lock wrote it.
///
/// ```json
/// {"pid": 4242, "updated": "2026-11-21T14:10:03.123Z", "counting": false,
///  "pending": {"count": 999984, "bytes": 15999744, "diskBytes": 8191868928, "oldest": "20261114T…"},
///  "inflight": {"count": 16, "bytes": 256, "diskBytes": 131072, "oldest": "20261114T…"},
///  "pendingByAge": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 999984, 0], "nextDue": "2026-11-14T09:00:00.000Z",
///  "maxSpoolSize": 10737418240, "maxItems": 2000000}
/// ```
///
/// `bytes` and `diskBytes` are missing while `counting` (the daemon is still counting, once at
/// start, what lies beyond its memory), and `estimated` is true in a figure whose bytes are partly
/// scaled up from a sample (what lay beyond memory at start, when it held more than the engine's
/// `QueueBytes.defaultStartSampleBudget` items); `pendingByAge` counts items by age in status's doubling
/// buckets as of `updated`; `maxSpoolSize` and `maxItems` are there when the daemon has them.
public enum QueueCountsFile {
    public static let fileName = "counts"

    public struct Figures: Equatable, Sendable {
        public var count: Int
        /// Payload bytes and what the items take on disk; nil while the daemon still counts.
        public var payloadBytes: Int64?
        public var diskBytes: Int64?
        public var oldest: ItemID?
        /// The bytes are partly estimated from a sample (what lay beyond memory at start).
        public var estimated: Bool

        public init(count: Int, payloadBytes: Int64?, diskBytes: Int64?, oldest: ItemID?, estimated: Bool = false) {
            (self.count, self.payloadBytes, self.diskBytes, self.oldest) = (count, payloadBytes, diskBytes, oldest)
            self.estimated = estimated
        }
    }

    public struct Contents: Equatable, Sendable {
        public var pid: Int32
        public var updated: Timestamp
        public var pending: Figures
        public var inflight: Figures
        public var pendingByAge: QueueAgeShape
        public var nextDue: Timestamp?
        public var limit: SpoolSizeLimit?

        /// Whether the bytes are still being counted.
        public var counting: Bool { pending.diskBytes == nil }

        public init(
            pid: Int32, updated: Timestamp, pending: Figures, inflight: Figures, pendingByAge: QueueAgeShape, nextDue: Timestamp?,
            limit: SpoolSizeLimit?
        ) {
            (self.pid, self.updated, self.pending, self.inflight) = (pid, updated, pending, inflight)
            (self.pendingByAge, self.nextDue, self.limit) = (pendingByAge, nextDue, limit)
        }

        /// The same figures, the time aside: whether a rewrite would say anything new.
        public func saysTheSame(as other: Contents) -> Bool {
            var other = other
            other.updated = updated
            return self == other
        }
    }

    /// Replaces the file atomically (written in tmp/, renamed over `SPOOL/counts`).
    public static func write(_ contents: Contents, in spool: Spool) throws {
        func figures(_ f: Figures) -> [String: Any] {
            var object: [String: Any] = ["count": f.count]
            if let bytes = f.payloadBytes { object["bytes"] = bytes }
            if let disk = f.diskBytes { object["diskBytes"] = disk }
            if let oldest = f.oldest { object["oldest"] = oldest.rawValue }
            if f.estimated { object["estimated"] = true }
            return object
        }
        var object: [String: Any] = [
            "pid": Int(contents.pid), "updated": contents.updated.iso8601, "counting": contents.counting,
            "pending": figures(contents.pending), "inflight": figures(contents.inflight),
            "pendingByAge": contents.pendingByAge.counts,
        ]
        if let due = contents.nextDue { object["nextDue"] = due.iso8601 }
        if let bytes = contents.limit?.bytes { object["maxSpoolSize"] = bytes }
        if let items = contents.limit?.items { object["maxItems"] = items }
        try AdvisoryFile.replace(fileName, with: object, in: spool)
    }

    public static func remove(in spool: Spool) { AdvisoryFile.remove(fileName, in: spool) }

    /// The file's contents, or nil when there is none or it cannot be read (or says nothing
    /// usable): the caller then counts from the folders.
    public static func read(in spool: Spool) -> Contents? {
        guard let object = AdvisoryFile.read(fileName, in: spool),
              let pid = (object["pid"] as? NSNumber)?.int32Value,
              let updatedText = object["updated"] as? String, let updated = Timestamp(iso8601: updatedText),
              let pending = figures(object["pending"]), let inflight = figures(object["inflight"])
        else { return nil }
        let ages = (object["pendingByAge"] as? [NSNumber])?.map(\.intValue) ?? []
        let bytes = (object["maxSpoolSize"] as? NSNumber)?.int64Value
        let items = (object["maxItems"] as? NSNumber)?.intValue
        return Contents(
            pid: pid, updated: updated, pending: pending, inflight: inflight, pendingByAge: QueueAgeShape(counts: ages),
            nextDue: (object["nextDue"] as? String).flatMap(Timestamp.init(iso8601:)),
            limit: bytes != nil || items != nil ? SpoolSizeLimit(bytes: bytes, items: items) : nil)
    }

    private static func figures(_ value: Any?) -> Figures? {
        guard let object = value as? [String: Any], let count = (object["count"] as? NSNumber)?.intValue, count >= 0 else { return nil }
        return Figures(
            count: count, payloadBytes: (object["bytes"] as? NSNumber)?.int64Value,
            diskBytes: (object["diskBytes"] as? NSNumber)?.int64Value, oldest: (object["oldest"] as? String).flatMap(ItemID.init),
            estimated: object["estimated"] as? Bool ?? false)
    }
}
