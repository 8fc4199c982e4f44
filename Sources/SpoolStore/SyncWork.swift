import SpoolSystem

/// The syncs one step of a commit waits for (`Spool.beginCommit`, `Spool.continueCommit`), made
/// by the caller: at once (`Spool.commit`), or by the daemon on a thread of its own (the engine's
/// `DurabilityWorker`), so that the loop which reads answers and keeps deadlines never waits on
/// the disk. Each call is an `fsync(2)` of a descriptor the spool handed over or one `syncfs(2)`:
/// nothing else of the spool is touched, so they may run on another thread while `Spool` itself
/// stays single-threaded.
public struct SyncWork: Sendable {
    enum Call: Sendable {
        /// `fsync(2)` of `fd`. `owned`: a staged json's descriptor, handed over to be closed
        /// after its sync (the spool's folders and its index keep theirs).
        case sync(FileDescriptor, label: String, site: SourceLocation, owned: Bool)
        /// `syncfs(2)` of the file system holding `fd` (the spool's root).
        case fileSystem(FileDescriptor, label: String, site: SourceLocation)
        /// `fsync(2)` of a descriptor its owner may let go of meanwhile (a part log that starts
        /// over): the work keeps it open until it is made or dropped.
        case shared(SharedDescriptor, label: String, site: SourceLocation)
    }

    let fs: any FileSystem
    let calls: [Call]

    /// Makes the calls in order. The first failure ends the work and is final (never retried
    /// and trusted: the pages it could not write may be gone); the descriptors handed over are
    /// closed whatever happens.
    public func perform() throws {
        defer { discard() }
        for call in calls {
            switch call {
            case .sync(let fd, let label, let site, _): try fs.sync(fd, label: label, at: site)
            case .fileSystem(let fd, let label, let site): try fs.syncFileSystem(fd, label: label, at: site)
            case .shared(let shared, let label, let site): try fs.sync(shared.fd, label: label, at: site)
            }
        }
    }

    /// Closes the descriptors handed over without syncing: work that will never be made (an
    /// earlier sync failed, and the process stops).
    public func discard() {
        for case .sync(let fd, _, _, true) in calls { fs.close(fd) }
    }

    /// Whether there is nothing to make durable.
    public var isEmpty: Bool { calls.isEmpty }

    /// The work of several steps as one (group commit on the thread that makes them): each call
    /// once, in the order first asked for. A sync made now covers every write made before it, and
    /// each step's writes were made before its work was handed over: the index's fsync, a
    /// folder's or the `syncfs` asked for by several steps is made once for all of them.
    public static func merging(_ works: [SyncWork]) -> SyncWork? {
        guard let first = works.first else { return nil }
        var calls: [Call] = []
        var synced = Set<Int32>()
        var syncedShared = Set<ObjectIdentifier>()
        var syncedFileSystem = false
        for call in works.lazy.flatMap(\.calls) {
            switch call {
            case .shared(let shared, _, _):
                if !syncedShared.insert(ObjectIdentifier(shared)).inserted { continue }
            case .sync(let fd, _, _, let owned):
                // A descriptor handed over (a staged json) is its step's own: never shared.
                if !owned && !synced.insert(fd.rawValue).inserted { continue }
            case .fileSystem:
                if syncedFileSystem { continue }
                syncedFileSystem = true
            }
            calls.append(call)
        }
        return SyncWork(fs: first.fs, calls: calls)
    }
}

/// A descriptor shared by its owner and the syncs handed over for it (`SyncWork.Call.shared`):
/// closed once the last of them lets go, so a sync made late never reaches a descriptor number
/// that was closed and given to another file meanwhile.
public final class SharedDescriptor: Sendable {
    let fd: FileDescriptor
    private let fs: any FileSystem

    init(_ fd: FileDescriptor, fs: any FileSystem) { (self.fd, self.fs) = (fd, fs) }

    deinit { fs.close(fd) }
}
