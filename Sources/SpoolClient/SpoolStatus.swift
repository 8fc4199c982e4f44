import Foundation

/// A spool's state, read without changing anything: what `spoold status` shows.
public struct SpoolStatus: Sendable, Equatable {
    public struct Totals: Sendable, Equatable {
        public var count: Int
        /// Payload bytes.
        public var bytes: Int64
        /// When the oldest item was made (from its id).
        public var oldestCreatedAt: Date?
        /// What the items take on disk: the allocated blocks of both files of each.
        public var diskBytes: Int64 = 0
        /// `bytes` and `diskBytes` are estimated from a sample of the items (a folder of more
        /// than 4,096), or still being counted by the daemon (0 then).
        public var bytesEstimated = false
    }

    public var pending: Totals
    public var inflight: Totals
    public var failed: Totals
    /// Kept only by a daemon run with `--keep-done`.
    public var done: Totals
    /// Files waiting in `incoming/` (the folders below it included).
    public var incomingFiles: Int
    public var incomingBytes: Int64
    /// When the next pending item that was tried before is due.
    public var nextDue: Date?
    /// The pid of the daemon working on the spool; nil when none runs.
    public var daemonPID: Int32?
    /// Why the daemon paused uploads (the endpoint is unreachable), while it does.
    public var uploadsPaused: String?
    /// Until when the daemon holds its uploads outside its `--upload-window` windows, while it does.
    public var uploadsHeldUntil: Date?
    /// Since when the daemon takes no new files in (the spool's file system is full).
    public var intakePausedSince: Date?
    /// Since when the daemon's `--max-spool-size` is reached.
    public var fullSince: Date?
}
