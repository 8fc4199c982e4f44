import Dispatch
import SpoolSystem
import Synchronization

/// Removes the files of items whose success is already recorded in the index, on a thread of its
/// own. ext4 spends about 100 µs per unlink of a small file; done on the engine's thread, the two
/// unlinks of each uploaded item held back the next uploads by a third (measured with
/// `scripts/bench`). Recorded successes need no folder fsync (recovery completes them from the
/// index), so nothing but index compaction has to wait for the removals: `drain` is called first.
/// The same thread syncs the blobs of long direct uploads (`perform`).
final class FileReaper: Sendable {
    /// One item's files in one folder, removed json first (the item disappears), then its blob.
    /// No json: it was kept for reuse (`Spool.spareJSONs`), only the blob goes.
    struct Removal: Sendable {
        var folder: FileDescriptor
        var json: String?
        var blob: String
    }

    private let fs: any FileSystem
    private let queue = DispatchQueue(label: "spoold.spool.reaper")
    /// The first removal that failed for another reason than a missing file; reported by `check`.
    private let failure = Mutex<(any Error)?>(nil)
    /// Batches queued whose removals must be synced (`remove(_:thenSyncing:)`): only the last one
    /// queued syncs, for all of them (group commit on this thread).
    private let syncsQueued = Atomic<Int>(0)

    init(fs: any FileSystem) { self.fs = fs }

    /// Queues the removals and returns at once. With `folder`, the removals are made durable
    /// too: the folder is fsynced after them, once for every batch queued meanwhile.
    func remove(_ removals: [Removal], thenSyncing folder: (fd: FileDescriptor, label: String)? = nil) {
        guard !removals.isEmpty else { return }
        if folder != nil { syncsQueued.add(1, ordering: .relaxed) }
        queue.async { [self] in
            for removal in removals {
                do {
                    if let json = removal.json {
                        try fs.remove(json, in: removal.folder, isDirectory: false)
                        CrashPoint.commitAfterJSONRename.reached()
                    }
                    try fs.remove(removal.blob, in: removal.folder, isDirectory: false)
                } catch let error as SystemError where error.isNotFound {
                    continue  // an operator purged it meanwhile: its success is recorded all the same
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
            guard let folder, syncsQueued.subtract(1, ordering: .relaxed).newValue == 0 else { return }
            do { try fs.sync(folder.fd, label: folder.label) } catch { failure.withLock { if $0 == nil { $0 = error } } }
        }
    }

    /// Queues other slow file work that must not hold up the engine (making a direct upload's
    /// blob durable): run in order with the removals, and a thrown error is reported as a
    /// failed removal is.
    func perform(_ work: @escaping @Sendable (any FileSystem) throws -> Void) {
        queue.async { [self] in
            do { try work(fs) } catch { failure.withLock { if $0 == nil { $0 = error } } }
        }
    }

    /// Waits until every queued removal is done, then reports a failed one.
    func drain() throws {
        queue.sync {}
        try check()
    }

    /// Throws the first failed removal (EIO, say): the spool must stop taking work, never retry and trust it.
    func check() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
