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
    private static let stagingName = ".size-limit"
    private static let maximumSize = 4096

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
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let fs = spool.fs
        let tmp = spool.descriptor(.tmp)
        try? fs.remove(stagingName, in: tmp, isDirectory: false)
        let fd = try fs.open(stagingName, relativeTo: tmp, flags: [.writeOnly, .create, .exclusive], mode: 0o644)
        try fs.closing(fd) { try fs.writeAll($0, Array(data) + [0x0a], label: "tmp/\(stagingName)") }
        try fs.rename(stagingName, in: tmp, to: fileName, in: spool.root)
    }

    /// Removes the marker; a missing one is fine.
    public static func remove(in spool: Spool) {
        try? spool.fs.remove(fileName, in: spool.root, isDirectory: false)
    }

    /// The marker's contents, or nil when there is none (or it cannot be read).
    public static func read(in spool: Spool) -> Contents? {
        let fs = spool.fs
        guard let fd = try? fs.open(fileName, relativeTo: spool.root, flags: [.readOnly, .nonBlocking], mode: 0),
              let bytes = try? fs.closing(fd, { try fs.readAll($0, limit: maximumSize) }) ?? nil,
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let sinceText = object["since"] as? String, let since = Timestamp(iso8601: sinceText),
              let limit = (object["limitBytes"] as? NSNumber)?.int64Value
        else { return nil }
        return Contents(
            since: since, limitBytes: limit, queuedBytes: (object["queuedBytes"] as? NSNumber)?.int64Value ?? 0,
            whenFull: object["whenFull"] as? String ?? "block")
    }
}
