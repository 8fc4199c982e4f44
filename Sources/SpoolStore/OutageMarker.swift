import Foundation
import SpoolCore
import SpoolSystem

/// `SPOOL/outage`: present while the daemon finds the endpoint unreachable and has paused uploads.
///
/// Written (to `tmp/`, then renamed into place) when an outage starts and removed when it ends,
/// so `spoold status` and other tools can see the pause without talking to the daemon. Advisory:
/// it is not fsynced, and a daemon removes a leftover one when it starts and when it stops.
///
/// ```json
/// {"reason": "endpoint unreachable (connection refused)", "since": "2026-11-21T14:10:03.123Z"}
/// ```
public enum OutageMarker {
    public static let fileName = "outage"

    public struct Contents: Equatable, Sendable {
        public var since: Timestamp
        public var reason: String

        public init(since: Timestamp, reason: String) {
            self.since = since
            self.reason = reason
        }
    }

    /// Replaces the marker atomically (open in tmp/, write, rename over `SPOOL/outage`).
    public static func write(_ contents: Contents, in spool: Spool) throws {
        let object: [String: String] = ["since": contents.since.iso8601, "reason": String(contents.reason.prefix(512))]
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
        return Contents(since: since, reason: object["reason"] as? String ?? "unknown")
    }
}
