import Foundation
import SpoolCore
import SpoolSystem

/// `SPOOL/window-closed`: present while the daemon holds its uploads outside its
/// `--upload-window` windows, so `spoold status` can say "paused until 22:00" without talking to
/// it. `untilLocal` is the opening as the daemon reads it in its own local zone (`22:00`, or
/// `Sat 08:00` a day or more ahead); `until` the same instant in UTC.
///
/// Like `SPOOL/outage`: written to tmp/ and renamed into place, not fsynced, removed when a window
/// opens and when a daemon starts or stops.
///
/// ```json
/// {"since": "2026-11-21T06:00:00.000Z", "until": "2026-11-21T21:00:00.000Z", "untilLocal": "22:00", "windows": "22:00-06:00"}
/// ```
public enum WindowMarker {
    public static let fileName = "window-closed"

    public struct Contents: Equatable, Sendable {
        /// When uploads were held (the daemon's start, if it started outside its windows).
        public var since: Timestamp
        /// When the next window opens.
        public var until: Timestamp
        /// The same, on the daemon's local clock.
        public var untilLocal: String
        /// `--upload-window` as given.
        public var windows: String

        public init(since: Timestamp, until: Timestamp, untilLocal: String, windows: String) {
            (self.since, self.until, self.untilLocal, self.windows) = (since, until, untilLocal, windows)
        }
    }

    /// Replaces the marker atomically (open in tmp/, write, rename over `SPOOL/window-closed`).
    public static func write(_ contents: Contents, in spool: Spool) throws {
        let object: [String: Any] = [
            "since": contents.since.iso8601, "until": contents.until.iso8601, "untilLocal": contents.untilLocal,
            "windows": String(contents.windows.prefix(512)),
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
              let untilText = object["until"] as? String, let until = Timestamp(iso8601: untilText)
        else { return nil }
        // Shown by `status` as it is: a hand-made marker cannot put a line break there.
        let local = (object["untilLocal"] as? String).map { LogEscaping.line(String($0.prefix(16))) } ?? until.iso8601
        return Contents(
            since: since, until: until, untilLocal: local,
            windows: LogEscaping.line(String((object["windows"] as? String ?? "").prefix(512))))
    }
}
