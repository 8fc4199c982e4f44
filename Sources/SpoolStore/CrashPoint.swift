import Glibc
import SpoolSystem
import Synchronization

/// Named places between two steps of a transition where a test can make spoold die.
///
/// `SPOOLD_CRASH_AT=<point>[:<n>]` makes the process SIGKILL itself the n-th time (default: the
/// first) it reaches that point, so integration tests can cut every transition at every step and
/// check that recovery puts the spool right. The variable is read once; when it is unset,
/// `reached` is one load and one comparison.
public enum CrashPoint: String, CaseIterable, Sendable {
    /// `Spool.add`: blobs and jsons staged in tmp/ (or the blob fsynced in incoming/).
    case addAfterStage = "add.after-stage"
    /// `Spool.add`: the `add` records are synced in the index.
    case addAfterIndex = "add.after-index"
    /// `Spool.add`: one item's blob is renamed into pending/ (once per item).
    case addAfterBlobRename = "add.after-blob-rename"
    /// `Spool.add`: one item's json is renamed into pending/ (once per item).
    case addAfterJSONRename = "add.after-json-rename"
    /// `Spool.add`: the touched folders are fsynced (before the caller reports success).
    case addAfterFolderSync = "add.after-folder-sync"

    /// `Spool.commit`: new json contents staged in tmp/ (reached even when nothing needed staging).
    case commitAfterStage = "commit.after-stage"
    /// `Spool.commit`: the batch's records are synced in the index.
    case commitAfterIndex = "commit.after-index"
    /// `Spool.commit`: one item's blob is renamed to its new place (moves only, once per item).
    case commitAfterBlobRename = "commit.after-blob-rename"
    /// `Spool.commit`: one item's json is renamed to its new place, or unlinked for a removal
    /// (on the `FileReaper`'s thread for an uploaded item the engine removes in the background).
    case commitAfterJSONRename = "commit.after-json-rename"
    /// `Spool.commit`: the touched folders are fsynced.
    case commitAfterFolderSync = "commit.after-folder-sync"

    /// `IndexFile.compact`: the new index is written and fsynced beside the old one.
    case compactAfterWrite = "compact.after-write"
    /// `IndexFile.compact`: the new index is renamed over the old one (directory not yet synced).
    case compactAfterRename = "compact.after-rename"

    /// S3 multipart: CreateMultipartUpload answered, its upload id not yet recorded.
    case multipartAfterCreate = "multipart.after-create"
    /// S3 multipart: the upload id is recorded in `parts/<id>.log`, no part sent yet.
    case multipartAfterBegin = "multipart.after-begin"
    /// S3 multipart: one part is recorded in the part log (once per part).
    case multipartAfterPart = "multipart.after-part"
    /// S3 multipart: every part recorded, CompleteMultipartUpload not yet sent.
    case multipartBeforeComplete = "multipart.before-complete"
    /// S3 multipart: CompleteMultipartUpload succeeded, the item's success not yet recorded.
    case multipartAfterComplete = "multipart.after-complete"

    /// tus: the creation (POST) answered with the upload URL, not yet recorded.
    case tusAfterCreate = "tus.after-create"
    /// tus: the upload URL is recorded in `parts/<id>.log`, nothing sent to it yet.
    case tusAfterRecord = "tus.after-record"
    /// tus: a PATCH answered and its offset noted in the log (once per PATCH).
    case tusAfterPatch = "tus.after-patch"

    /// A direct upload: the file is renamed from incoming/ to `inflight/<id>.a1.blob`, no request
    /// sent yet (once per file).
    case directAfterTake = "direct.after-take"

    /// Start-up recovery: one planned repair is done (once per repair).
    case recoveryAfterRepair = "recovery.after-repair"
    /// Start-up recovery: interrupted uploads are back in pending/ (or failed/), before compaction.
    case recoveryAfterRequeue = "recovery.after-requeue"

    /// Dies here if `SPOOLD_CRASH_AT` names this point and this is its n-th arrival.
    @inline(__always)
    public func reached() {
        guard let armed = CrashPoint.armed, armed.point == self else { return }
        CrashPoint.arrive(armed.count)
    }

    /// The parsed `SPOOLD_CRASH_AT`, or nil (the usual case). Read once, on first use.
    static let armed: (point: CrashPoint, count: Int)? = parse(getenv("SPOOLD_CRASH_AT").map { String(cString: $0) })

    private static let arrivals = Atomic<Int>(0)

    private static func arrive(_ count: Int) {
        let n = arrivals.add(1, ordering: .relaxed).newValue
        if n == count { kill(getpid(), SIGKILL) }
    }

    /// `add.after-index` or `add.after-index:3`; anything else disarms (and says so once).
    static func parse(_ text: String?) -> (point: CrashPoint, count: Int)? {
        guard let text, !text.isEmpty else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard let point = CrashPoint(rawValue: parts[0]) else {
            warn("SPOOLD_CRASH_AT=\(text): unknown crash point; known: \(allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        guard parts.count == 2 else { return (point, 1) }
        guard let count = Int(parts[1]), count >= 1 else {
            warn("SPOOLD_CRASH_AT=\(text): the count after ':' must be a whole number of at least 1")
            return nil
        }
        return (point, count)
    }

    private static func warn(_ text: String) {
        FileDescriptor.standardError.write("spoold: \(text)\n")
    }
}
