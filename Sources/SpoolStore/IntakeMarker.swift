import SpoolCore
import SpoolSystem

/// `SPOOL/intake-paused`: present while the daemon takes no new files in because the spool's file
/// system is full (uploads go on). Its mtime is when the pause began.
///
/// Empty, so making it needs no data block on a full disk; advisory like `SPOOL/outage` (not
/// fsynced, a failure to make it is ignored, and a daemon removes a leftover one when it starts
/// and when it stops; `spoold status` ignores it when no daemon holds the lock).
public enum IntakeMarker {
    public static let fileName = "intake-paused"

    /// Creates the marker with `since` as its mtime; a failure is ignored.
    public static func write(since: Timestamp, in spool: Spool) {
        let fs = spool.fs
        guard let fd = try? fs.open(fileName, relativeTo: spool.root, flags: [.writeOnly, .create, .truncate], mode: 0o644)
        else { return }
        try? fs.setModificationTime(fd, milliseconds: since.millisecondsSinceEpoch)
        fs.close(fd)
    }

    /// Removes the marker; a missing one is fine.
    public static func remove(in spool: Spool) {
        try? spool.fs.remove(fileName, in: spool.root, isDirectory: false)
    }

    /// When the pause began, or nil when there is no marker.
    public static func read(in spool: Spool) -> Timestamp? {
        guard let status = try? spool.fs.status(of: fileName, in: spool.root), status.type == .regular else { return nil }
        return Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds)
    }
}
