import Glibc
import SpoolCore
import SpoolSystem

/// A spool directory on disk: its folders, its index, and every transition between them.
///
/// The one type that renames, removes and creates item files (Postfix's rule: one module owns the
/// queue). Each batch is write-ahead logged, renamed json-last (the json's arrival is what makes an
/// item visible), and made durable once per batch (group commit): one `syncfs` for a large batch,
/// otherwise one fsync per touched folder; claims and successes by their index record alone.
///
/// Not thread-safe: one thread uses a `Spool` (the engine's loop, a command). The one exception
/// is the `SyncWork` a commit hands over (`beginCommit`, `continueCommit`): fsyncs of
/// descriptors the spool gave it, or one `syncfs`, which the daemon makes on a thread of its own
/// while the loop goes on; the next step of that commit waits for them. Background unlinks
/// (`FileReaper`) run on their own thread the same way, on descriptors handed over.
public final class Spool {
    /// Absolute path of the spool root, for messages.
    public let path: String
    /// Every system call on the spool goes through here; nothing outside the store holds it, so
    /// no other module names, opens or removes a file under SPOOL/ (Postfix's `mail_queue.c`).
    let fs: any FileSystem
    public let root: FileDescriptor
    public let index: IndexFile
    /// Room kept for recording outcomes on a full disk (`SPOOL/index.reserve`).
    public let reserve: SpaceReserve
    let reaper: FileReaper
    /// `SPOOL/parts/`: the durable progress of S3 multipart uploads.
    public let partLogs: PartLogFolder
    /// One descriptor per folder; incoming/'s is replaced when the folder is (`reopenIncomingIfReplaced`).
    private var folders: [SpoolFolder: FileDescriptor]
    let device: UInt64
    /// Set by processes that do not hold the daemon lock (`enqueue`, `retry`, `purge`): each of
    /// their adds and commits then holds a shared flock(2) on `tmp/` from its first staged file to
    /// its last rename, and a daemon's start-up recovery, which removes orphans from `tmp/` and
    /// completes half-renamed pairs, takes it exclusively (`excludingStagers`). So recovery never
    /// removes or "repairs" what a live process is in the middle of adding, and such a process
    /// waits for a recovery in progress before it starts.
    public var sharesStagingWithRecovery = false
    /// Whether a commit that finds the disk full may release `reserve` and try again: true for
    /// the daemon (and `check --repair`), whose outcomes free space; false for `retry` and
    /// `purge`, which must not spend the room kept for the daemon.
    public var mayReleaseReserve = true
    /// Whether a file in incoming/ with more than one hard link is taken (copied: its other
    /// names could still change it) or refused and left alone (`--allow-hardlinks`). Where
    /// `fs.protected_hardlinks` is 0, anyone may link any file they can see into incoming/, and
    /// spoold (root, or its own user) would upload a file its producer could not read; a file
    /// its producer wrote or renamed in has one link.
    public var takesHardLinkedFiles = false
    private var holdsStagingExclusively = false
    /// Jsons of uploaded items, renamed into tmp/ (`spare.N`) instead of unlinked, to be
    /// overwritten by the next json staged: a rename and an overwrite instead of an unlink and a
    /// file creation per item. Creating a file is the costliest step of taking one in on a busy
    /// ext4 (measured 0.08–0.85 ms against 0.06 ms for the reuse; see docs/performance.md "Where the time
    /// goes"). Only this process's own files are reused, checked on the open descriptor; any
    /// left by a crash are tmp/ orphans, removed by recovery.
    private var spareJSONs: [String] = []
    private var spareJSONCounter = 0

    /// Opens a spool, creating its layout on first use.
    public init(path: String, fs: any FileSystem = PosixFileSystem(), create: Bool = true) throws {
        self.fs = fs
        if create { try Spool.makeRoot(path, fs: fs) }
        let root: FileDescriptor
        do {
            // The root may be a symlink the operator made on purpose; nothing inside it may be.
            root = try fs.open(path, relativeTo: nil, flags: [.directory, .followSymlinks], mode: 0)
        } catch let error as SystemError where error.isNotFound {
            throw SpoolError.noSpool(path)
        }
        self.root = root
        var opened: [SpoolFolder: FileDescriptor] = [:]
        var created = false
        for folder in SpoolFolder.allCases {
            do {
                opened[folder] = try fs.open(folder.rawValue, relativeTo: root, flags: [.directory], mode: 0)
            } catch let error as SystemError where error.isNotFound && create {
                try fs.makeDirectory(folder.rawValue, in: root, mode: 0o700)
                opened[folder] = try fs.open(folder.rawValue, relativeTo: root, flags: [.directory], mode: 0)
                created = true
            } catch let error as SystemError where error.isNotFound {
                throw SpoolError.noSpool(path)
            } catch let error as SystemError where error.errno == .tooManySymbolicLinkLevels || error.errno == .notDirectory {
                throw SpoolError.notAFolder("\(path)/\(folder.rawValue)")
            }
        }
        if created { try fs.sync(root, label: path) }
        self.folders = opened
        self.device = try fs.status(of: root).device
        self.index = IndexFile(root: root, fs: fs)
        self.reserve = SpaceReserve(root: root, fs: fs)
        self.reaper = FileReaper(fs: fs)
        self.path = Spool.absolute(path)
        self.partLogs = PartLogFolder(root: root, fs: fs, spoolPath: self.path)
    }

    /// `mkdir SPOOL`, one level only: a typo in --spool must not create a tree of folders. A
    /// missing parent and a refused mkdir are named as such (not as "no spool").
    private static func makeRoot(_ path: String, fs: any FileSystem) throws {
        do {
            try fs.makeDirectory(path, in: nil, mode: 0o700)
        } catch let error as SystemError where error.errno == .fileExists {
            return
        } catch let error as SystemError where error.isNotFound {
            var parent = path
            while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
            parent = parent.lastIndex(of: "/").map { $0 == parent.startIndex ? "/" : String(parent[..<$0]) } ?? "."
            throw SpoolError.cannotCreate(
                path: path, reason: "its parent folder \(parent) does not exist (create it first, or check --spool)")
        } catch let error as SystemError {
            throw SpoolError.cannotCreate(path: path, reason: "\(error.errno)")
        }
    }

    /// A refused write (read-only mount, no permission) named as what it is, with the spool's
    /// path, instead of the system call that happened to hit it first.
    func explained(_ error: any Error) -> any Error {
        guard let error = error as? SystemError, [.readOnlyFileSystem, .permissionDenied, .notPermitted].contains(error.errno) else { return error }
        return SpoolError.notWritable(path: path, cause: "\(error.errno)")
    }

    deinit {
        try? reaper.drain()  // its removals use the folder descriptors
        for fd in folders.values { fs.close(fd) }
        fs.close(root)
    }

    public func descriptor(_ folder: SpoolFolder) -> FileDescriptor {
        guard let fd = folders[folder] else { preconditionFailure("folder \(folder) not open") }
        return fd
    }

    /// Opens incoming/ again when the folder now at `SPOOL/incoming` is not the one held open (it
    /// was removed and made again, or another folder was moved in): producers drop files into the
    /// new one. Returns whether it changed; false too while there is no folder there (a symlink
    /// or a file in its place is not taken).
    public func reopenIncomingIfReplaced() throws -> Bool {
        let held = try fs.status(of: descriptor(.incoming))
        guard let now = try? fs.status(of: SpoolFolder.incoming.rawValue, in: root), now.type == .directory,
              now.device != held.device || now.inode != held.inode
        else { return false }
        let fresh: FileDescriptor
        do { fresh = try fs.open(SpoolFolder.incoming.rawValue, relativeTo: root, flags: [.directory], mode: 0) }
        catch let e as SystemError where e.isNotFound || e.errno == .tooManySymbolicLinkLevels || e.errno == .notDirectory { return false }
        fs.close(descriptor(.incoming))
        folders[.incoming] = fresh
        return true
    }

    /// `SPOOL/<folder>/<name>`, for messages (uploads read a descriptor, never a path).
    public func path(of name: String, in folder: SpoolFolder) -> String { "\(path)/\(folder.rawValue)/\(name)" }

    public func path(of file: ItemFileName, at location: ItemLocation) -> String {
        path(of: file.description, in: SpoolFolder(location.state))
    }

    // MARK: Reading

    public func list(_ folder: SpoolFolder) throws -> [DirectoryEntry] { try fs.list(descriptor(folder)) }

    /// Reads an item's json, refusing anything that is not a small regular file (opened without following a symlink, checked on the descriptor, size-capped before parsing).
    public func readMetadata(_ id: ItemID, at location: ItemLocation) throws -> ItemMetadata {
        let name = ItemFileName(id: id, attempt: location.attempt, kind: .json).description
        return try readMetadata(named: name, in: SpoolFolder(location.state))
    }

    func readMetadata(named name: String, in folder: SpoolFolder) throws -> ItemMetadata {
        let bytes = try readSmallFile(name, in: folder, limit: ItemMetadata.maximumEncodedSize)
        return try MetadataCodec.decode(bytes)
    }

    /// Reads a small regular file without following links or blocking on a FIFO.
    public func readSmallFile(_ name: String, in folder: SpoolFolder, limit: Int) throws -> [UInt8] {
        try readSmallFile(name, in: descriptor(folder), label: "\(folder.rawValue)/\(name)", limit: limit)
    }

    func readSmallFile(_ name: String, in folder: FileDescriptor, label: String, limit: Int) throws -> [UInt8] {
        try readSmallFileAndStatus(name, in: folder, label: label, limit: limit).bytes
    }

    /// `readSmallFile`, with the `fstat` of the file read (its owner, for a sidecar).
    func readSmallFileAndStatus(_ name: String, in folder: FileDescriptor, label: String, limit: Int) throws
        -> (bytes: [UInt8], status: FileStatus)
    {
        try Spool.readSmallFileAndStatus(name, in: folder, label: label, limit: limit, fs: fs)
    }

    /// The same through any file system, for readers apart from the spool (`FolderReading`).
    static func readSmallFileAndStatus(_ name: String, in folder: FileDescriptor, label: String, limit: Int, fs: any FileSystem) throws
        -> (bytes: [UInt8], status: FileStatus)
    {
        let fd = try fs.open(name, relativeTo: folder, flags: [.readOnly, .nonBlocking], mode: 0)
        return try fs.closing(fd) { fd in
            let status = try fs.status(of: fd)
            guard status.type == .regular else { throw MetadataError("\(label) is not a regular file") }
            guard status.size <= Int64(limit), let bytes = try fs.readAll(fd, limit: limit, sizeHint: status.size) else {
                throw MetadataError("\(label) is larger than \(limit) bytes")
            }
            return (bytes, status)
        }
    }

    public func status(of file: ItemFileName, at location: ItemLocation) throws -> FileStatus {
        try status(of: file.description, in: SpoolFolder(location.state))
    }

    /// `fstatat(2)` of a name in one of the spool's folders, no link followed.
    public func status(of name: String, in folder: SpoolFolder) throws -> FileStatus {
        try fs.status(of: name, in: descriptor(folder))
    }

    /// `fstat(2)` of a folder itself: its mtime says whether its listing changed.
    public func status(of folder: SpoolFolder) throws -> FileStatus {
        try fs.status(of: descriptor(folder))
    }

    /// Opens an item's blob for its upload: `openat(2)` relative to its folder with O_NOFOLLOW and
    /// O_NONBLOCK (a symlink fails with ELOOP, a FIFO cannot block), then `fstat(2)` of what was
    /// opened. The caller checks the status and owns the descriptor.
    public func openBlob(_ id: ItemID, at location: ItemLocation) throws -> (FileDescriptor, FileStatus) {
        let name = ItemFileName(id: id, attempt: location.attempt, kind: .blob).description
        let fd = try fs.open(name, relativeTo: descriptor(SpoolFolder(location.state)), flags: [.readOnly, .nonBlocking, .noAccessTime], mode: 0)
        do {
            return (fd, try fs.status(of: fd))
        } catch {
            fs.close(fd)
            throw error
        }
    }

    /// Closes a descriptor from `openBlob` that will not become an upload's body (its check failed).
    public func closeBlob(_ fd: FileDescriptor) { fs.close(fd) }

    // MARK: Transitions

    /// From this many files to make durable in one batch, one `syncfs(2)` of the spool's file
    /// system replaces the fsync of each file and folder: the same guarantee (every write, create
    /// and rename before it is durable; writeback errors reported), at a constant cost per batch.
    public static let fileSystemSyncThreshold = 16

    /// Most spare jsons kept in tmp/ at once (`spareJSONs`); 0 unlinks every json.
    public var spareJSONLimit = 256

    /// `geteuid()`, asked once: the owner of the files this process makes.
    public static let effectiveUser = geteuid()

    /// Spare jsons ready for reuse: the engine takes in about this many files without creating one.
    public var spareJSONCount: Int { spareJSONs.count }

    /// Makes everything written so far durable with one `syncfs(2)`.
    func syncFileSystem(file: StaticString = #fileID, line: UInt = #line) throws {
        try fs.syncFileSystem(root, label: path, at: SourceLocation(file: file, line: line))
    }

    /// Commits in progress (`beginCommit` to the last `continueCommit`): the index is compacted
    /// only when there are none, since compaction drops the records they still rely on.
    private(set) var commitsInProgress = 0

    /// Moves items between folders, durably, as one batch: stage new json contents in tmp/ and
    /// fsync them, append and sync the index, rename (blob first, json last), fsync each touched
    /// folder once. Claims and recorded successes need no folder fsync: their synced index record
    /// is enough, because recovery completes them from the index wherever their files are.
    ///
    /// The steps of `beginCommit` and `continueCommit`, with each step's syncs made at once.
    /// - Parameter removingInBackground: recorded successes that leave the spool are handed to a
    ///   background thread instead of being unlinked here (reported `.moved`; a file already
    ///   gone is not noticed). `drainRemovals` waits for them; a failed one fails the next commit.
    public func commit(_ transitions: [SpoolTransition], removingInBackground: Bool = false) throws -> [TransitionResult] {
        try whileRecoveryWaits {
            guard !transitions.isEmpty else {
                try reaper.check()
                return []
            }
            var (commit, _, work) = try beginCommit(transitions, claims: 0, removingInBackground: removingInBackground)
            while true {
                do { try work.perform() } catch {
                    abandon(commit)
                    throw error
                }
                guard let next = try continueCommit(&commit) else { return commit.results }
                work = next
            }
        }
    }

    /// A batch of transitions on its way to disk, one step at a time (`beginCommit`,
    /// `continueCommit`): each step does the file work that may go ahead and returns the syncs
    /// the next step waits for. The caller makes them (at once, or on a thread of its own) before
    /// it continues; the order on disk is the same either way.
    public struct Commit: Sendable {
        enum Phase: Sendable {
            /// The finished transitions' new jsons are written in tmp/, not yet durable: their
            /// records wait for them.
            case staged
            /// Every record of the batch is written to the index, not yet durable.
            case recorded
            /// The finished transitions' files moved; the folders they touched are not yet durable.
            case applied
        }

        var phase: Phase
        let batch: RecordedBatch
        /// The claims at the start of the batch: moved by `beginCommit`, before their records are
        /// durable.
        let claims: Int
        let removingInBackground: Bool
        /// What became of each transition after the claims, in order, once they moved.
        public internal(set) var results: [TransitionResult] = []
        /// The folders whose entries the moves changed, to be synced.
        var dirty: Set<SpoolFolder> = []

        /// The transitions after the claims (finished uploads: removed, requeued, parked).
        public var finished: ArraySlice<SpoolTransition> { batch.transitions[claims...] }
    }

    /// Begins a commit: stages the new json contents of the transitions after the first `claims`
    /// (written, not synced), writes the index records that may be written now (all of them,
    /// unless staged jsons must be durable first), and moves the claims' files at once. Returns
    /// the claims' results and the syncs `continueCommit` waits for.
    ///
    /// A claim moves, and its upload may start, before its record is durable: a process that
    /// dies meanwhile leaves the record in the page cache, where recovery reads it, so the
    /// attempt is counted before the request (an attempt is counted on disk before it is made);
    /// only a power cut can lose a claim, and with it the count of an attempt it interrupted
    /// anyway. Every other transition moves only once its record is durable (`continueCommit`).
    ///
    /// On a full disk (no room for a staged json or a record) it releases the reserve and tries
    /// once more: recording outcomes is what frees space.
    public func beginCommit(_ transitions: [SpoolTransition], claims: Int, removingInBackground: Bool) throws
        -> (commit: Commit, claimed: [TransitionResult], sync: SyncWork)
    {
        precondition(transitions[..<claims].allSatisfy { $0.record.operation == .claim && $0.metadata == nil }, "claims come first")
        try reaper.check()
        let finished = claims..<transitions.count
        let wholeFileSystem = transitions[finished].count { $0.metadata != nil } >= Spool.fileSystemSyncThreshold
            || transitions[finished].contains { $0.fromDirectUpload }
        // Staged jsons of a small batch are fsynced one by one before their records are written;
        // a large batch's are covered by the `syncfs` that makes its records durable.
        var staged: [Int: FileDescriptor] = [:]
        try usingReserveWhenFull {
            do {
                for i in finished where transitions[i].metadata != nil {
                    let t = transitions[i]
                    staged[i] = try stageMetadata(t.metadata!, as: jsonName(t.record.id, t.record.from!), notBefore: t.notBefore, keepOpen: true)
                }
            } catch {
                for (i, fd) in staged {
                    fs.close(fd)
                    try? removeFile(jsonName(transitions[i].record.id, transitions[i].record.from!), in: .tmp)
                }
                staged = [:]
                throw error
            }
        }
        CrashPoint.commitAfterStage.reached()
        var commit = Commit(
            phase: .staged, batch: RecordedBatch(transitions: transitions, staged: Set(staged.keys), wholeFileSystem: wholeFileSystem),
            claims: claims, removingInBackground: removingInBackground)
        let work: SyncWork
        if staged.isEmpty || wholeFileSystem {
            for fd in staged.values { fs.close(fd) }
            do {
                try appendRecords(of: commit, transitions.indices)
            } catch {
                // Not recorded, so not happening: the staged copies are nobody's (recovery would remove them too).
                removeStaged(of: commit)
                throw error
            }
            commit.phase = .recorded
            work = try recordsSync(of: commit)
        } else {
            do {
                try appendRecords(of: commit, 0..<claims)
            } catch {
                for fd in staged.values { fs.close(fd) }
                removeStaged(of: commit)
                throw error
            }
            let files = staged.sorted { $0.key < $1.key }.map { i, fd in (fd, "tmp/\(jsonName(transitions[i].record.id, transitions[i].record.from!))") }
            work = syncingFiles(files)
        }
        commitsInProgress += 1
        let claimed: [TransitionResult]
        do {
            claimed = try moveFiles(of: &commit, 0..<claims)
        } catch {
            abandon(commit)
            work.discard()
            throw error
        }
        // Claims need no folder sync: they are as far as they go.
        if !claimed.isEmpty { CrashPoint.commitAfterFolderSync.reached() }
        return (commit, claimed, work)
    }

    /// The next step of `commit`, once the syncs the last step returned are made: writes the
    /// records that waited for their staged jsons, or moves the finished transitions' files
    /// (their records durable), or ends the commit. Returns the syncs the next step waits for, or
    /// nil when the commit is done (its `results` filled in).
    public func continueCommit(_ commit: inout Commit) throws -> SyncWork? {
        switch commit.phase {
        case .staged:
            do {
                try appendRecords(of: commit, commit.claims..<commit.batch.transitions.count)
            } catch {
                abandon(commit)
                throw error
            }
            commit.phase = .recorded
            return try recordsSync(of: commit)
        case .recorded:
            commit.phase = .applied
            do {
                commit.results = try moveFiles(of: &commit, commit.claims..<commit.batch.transitions.count)
            } catch {
                abandon(commit)
                throw error
            }
            let dirty = commit.dirty
            if dirty.isEmpty { return try continueCommit(&commit) }
            return commit.batch.wholeFileSystem ? syncingFileSystem() : syncingFolders(dirty)
        case .applied:
            commitsInProgress -= 1
            if !commit.results.isEmpty { CrashPoint.commitAfterFolderSync.reached() }
            return nil
        }
    }

    /// Gives up a commit whose syncs failed (the caller stops): it no longer holds off compaction.
    /// Its staged jsons are left to recovery if their records were written, removed otherwise.
    func abandon(_ commit: Commit) {
        if commit.phase == .staged { removeStaged(of: commit) }
        commitsInProgress -= 1
    }

    /// The sync that makes a commit's records durable: the index's fsync, or one `syncfs` for a
    /// large batch (which covers its staged jsons too).
    private func recordsSync(of commit: Commit) throws -> SyncWork {
        if commit.batch.wholeFileSystem { return syncingFileSystem() }
        return try syncingIndex()
    }

    /// The fsync of the index (the records appended so far), as work to hand over.
    private func syncingIndex(file: StaticString = #fileID, line: UInt = #line) throws -> SyncWork {
        SyncWork(fs: fs, calls: [.sync(try index.descriptorForSync(), label: SpoolFolder.indexFileName, site: SourceLocation(file: file, line: line), owned: false)])
    }

    /// One `syncfs(2)` of the spool's file system, as work to hand over.
    private func syncingFileSystem(file: StaticString = #fileID, line: UInt = #line) -> SyncWork {
        SyncWork(fs: fs, calls: [.fileSystem(root, label: path, site: SourceLocation(file: file, line: line))])
    }

    /// The fsync of each of `folders` once (the "group" in group commit), as work to hand over.
    private func syncingFolders(_ folders: Set<SpoolFolder>, file: StaticString = #fileID, line: UInt = #line) -> SyncWork {
        SyncWork(fs: fs, calls: SpoolFolder.allCases.filter(folders.contains).map {
            .sync(descriptor($0), label: "\(path)/\($0.rawValue)", site: SourceLocation(file: file, line: line), owned: false)
        })
    }

    /// The fsync of each of `files` (open descriptors, closed after), as work to hand over.
    private func syncingFiles(_ files: [(FileDescriptor, label: String)], file: StaticString = #fileID, line: UInt = #line) -> SyncWork {
        SyncWork(fs: fs, calls: files.map { .sync($0.0, label: $0.label, site: SourceLocation(file: file, line: line), owned: true) })
    }

    /// Writes the records of the transitions at `positions` to the index, not synced; tried once
    /// more from the reserve on a full disk.
    private func appendRecords(of commit: Commit, _ positions: Range<Int>) throws {
        guard !positions.isEmpty else { return }
        let records = commit.batch.transitions[positions].map(\.record)
        try usingReserveWhenFull { try index.append(records, sync: false) }
        if positions.upperBound == commit.batch.transitions.count { CrashPoint.commitAfterIndex.reached() }
    }

    /// Removes the staged jsons of a commit whose records were never written: nobody's (recovery
    /// would remove them too).
    private func removeStaged(of commit: Commit) {
        for i in commit.batch.staged { try? removeFile(jsonName(commit.batch.transitions[i].record.id, commit.batch.transitions[i].record.from!), in: .tmp) }
    }

    /// Renames (blob first, json last) or removes the files of the transitions at `positions`,
    /// whose records are durable (claims: written); notes in `commit.dirty` the folders to sync.
    /// Returns one result per position, in order.
    private func moveFiles(of commit: inout Commit, _ positions: Range<Int>) throws -> [TransitionResult] {
        let batch = commit.batch
        var removals: [FileReaper.Removal] = []
        defer { reaper.remove(removals) }
        var results: [TransitionResult] = []
        results.reserveCapacity(positions.count)
        for i in positions {
            let t = batch.transitions[i]
            let from = t.record.from!
            let fromFolder = SpoolFolder(from.state)
            let needsFolderSync = !t.record.operation.isCompletedFromIndex
            let json = jsonName(t.record.id, from)
            let blob = ItemFileName(id: t.record.id, attempt: from.attempt, kind: .blob).description
            let staged = batch.staged.contains(i)
            if commit.removingInBackground && t.record.to == nil && t.record.operation == .done && !staged {
                if keepAsSpare(json, in: fromFolder) {
                    CrashPoint.commitAfterJSONRename.reached()
                    removals.append(.init(folder: descriptor(fromFolder), json: nil, blob: blob))
                } else {
                    removals.append(.init(folder: descriptor(fromFolder), json: json, blob: blob))
                }
                results.append(.moved)
                continue
            }
            do {
                // An item purged or moved away since it was chosen: a lost race. Check before the
                // staged json is renamed in, or it would resurrect a lone json.
                if staged && (try? fs.status(of: t.fromDirectUpload ? blob : json, in: descriptor(fromFolder))) == nil {
                    try? removeFile(json, in: .tmp)
                    throw SystemError(.stat, path: "\(fromFolder.rawValue)/\(json)", errno: .noSuchFileOrDirectory)
                }
                if staged {
                    try fs.rename(json, in: descriptor(.tmp), to: json, in: descriptor(fromFolder))
                    if needsFolderSync { commit.dirty.insert(.tmp) }
                } else if let notBefore = t.notBefore {
                    try setModificationTime(json, in: fromFolder, to: notBefore)
                }
                if needsFolderSync { commit.dirty.insert(fromFolder) }
                if let to = t.record.to {
                    let toFolder = SpoolFolder(to.state)
                    try fs.rename(blob, in: descriptor(fromFolder),
                                  to: ItemFileName(id: t.record.id, attempt: to.attempt, kind: .blob).description,
                                  in: descriptor(toFolder))
                    CrashPoint.commitAfterBlobRename.reached()
                    try fs.rename(json, in: descriptor(fromFolder), to: jsonName(t.record.id, to), in: descriptor(toFolder))
                    CrashPoint.commitAfterJSONRename.reached()
                    if needsFolderSync { commit.dirty.insert(toFolder) }
                } else {
                    do {
                        try fs.remove(json, in: descriptor(fromFolder), isDirectory: false)
                    } catch let error as SystemError where error.isNotFound {
                        // A lone blob is an item too (a direct upload cut by a crash, `purge`d
                        // before the next start-up): it goes on its own. No blob either: vanished.
                        try fs.remove(blob, in: descriptor(fromFolder), isDirectory: false)
                        results.append(.moved)
                        continue
                    }
                    CrashPoint.commitAfterJSONRename.reached()
                    try? fs.remove(blob, in: descriptor(fromFolder), isDirectory: false)
                }
                results.append(.moved)
            } catch let error as SystemError where error.isNotFound {
                results.append(.vanished("\(fromFolder.rawValue)/\(t.record.id): \(error)"))
            }
        }
        return results
    }

    /// Turns files into items, durable before anyone is told they exist: blob and json made durable in tmp/ (or the blob
    /// renamed in, after an fsync, when it is on our file system with one link), the index record
    /// synced, the pair renamed into pending/ (json last), the folders synced. Only then does the
    /// caller report success.
    public func add(_ items: [NewItem]) throws -> [AddResult] {
        try whileRecoveryWaits { try addUnguarded(items) }
    }

    private func addUnguarded(_ items: [NewItem]) throws -> [AddResult] {
        var prepared: [(item: NewItem, blob: PreparedBlob)] = []
        var results = [AddResult?](repeating: nil, count: items.count)
        var order: [Int] = []
        let wholeFileSystem = 2 * items.count >= Spool.fileSystemSyncThreshold
        // Subfolders of incoming/ holding sources, by path: opened once per batch (a `tar -x` of
        // a thousand files into one folder holds one descriptor, not a thousand), open until
        // their renames are durable.
        var openedFolders: [String: FileDescriptor] = [:]
        defer { for fd in openedFolders.values { fs.close(fd) } }
        do {
            for (i, item) in items.enumerated() {
                do {
                    var item = item
                    let blob = try prepareBlob(for: item, sync: !wholeFileSystem, folders: &openedFolders)
                    item.metadata.size = blob.size
                    try stageMetadata(
                        item.metadata, as: jsonName(item.id, ItemLocation(item.state, attempt: 0)), notBefore: nil,
                        sync: !wholeFileSystem)
                    prepared.append((item, blob))
                    order.append(i)
                } catch let error as ItemRejection {
                    results[i] = .rejected(error.reason)
                }
            }
        } catch {
            // Includes the item whose json could not be staged after its blob was copied to tmp/.
            cleanUpStaged(items)
            throw nothingAdded(explained(error))
        }
        guard !prepared.isEmpty else { return results.map { $0! } }
        CrashPoint.addAfterStage.reached()
        do {
            try index.append(
                prepared.map { IndexRecord(.add, $0.item.id, from: nil, to: ItemLocation($0.item.state, attempt: 0)) },
                sync: !wholeFileSystem)
            // Blobs, staged jsons and the index records, all durable before anything is renamed.
            if wholeFileSystem { try syncFileSystem() }
        } catch {
            // Nothing was recorded or renamed: leave no half item behind in tmp/.
            cleanUpStaged(items)
            throw nothingAdded(explained(error))
        }
        CrashPoint.addAfterIndex.reached()
        var dirty: Set<SpoolFolder> = [.tmp]
        var dirtySubfolders: [Int32: FileDescriptor] = [:]
        var sourcesToUnlink: [PreparedBlob.Unlink] = []
        for (n, p) in prepared.enumerated() {
            let location = ItemLocation(p.item.state, attempt: 0)
            let folder = SpoolFolder(p.item.state)
            let blobName = ItemFileName(id: p.item.id, attempt: 0, kind: .blob).description
            let json = jsonName(p.item.id, location)
            do {
                switch p.blob.kind {
                case .staged:
                    try fs.rename(blobName, in: descriptor(.tmp), to: blobName, in: descriptor(folder))
                    if let unlink = p.blob.unlinkAfterCommit { sourcesToUnlink.append(unlink) }
                case .renameFromIncoming(let name):
                    try fs.rename(name, in: p.blob.incomingSubfolder ?? descriptor(.incoming), to: blobName, in: descriptor(folder))
                    if let subfolder = p.blob.incomingSubfolder { dirtySubfolders[subfolder.rawValue] = subfolder } else {
                        dirty.insert(.incoming)
                    }
                case .renameFromPath(let source):
                    try fs.rename(source, in: FileDescriptor(rawValue: AT_FDCWD), to: path(of: blobName, in: folder),
                                  in: FileDescriptor(rawValue: AT_FDCWD))
                }
            } catch let error as SystemError where error.errno == .improperLink && p.blob.kind.isRename {
                // Another mount of the same file system inside incoming/ (a bind mount keeps the
                // device number, so `prepareBlob` saw one file system): copied instead, as from
                // another file system, and the source removed once the item is durable.
                if let refusal = try copyInsteadOfRenaming(p.blob, as: blobName, into: folder) {
                    try? removeFile(json, in: .tmp)
                    results[order[n]] = .rejected("\(p.item.source.label) \(refusal)")
                    continue
                }
                sourcesToUnlink.append(source(of: p.blob))
            } catch let error as SystemError where error.isNotFound && p.blob.kind.isRename {
                // Its producer removed or renamed the source since it was synced: a lost race,
                // not a failure of the batch. Its add record names files that never arrive,
                // which recovery ignores.
                try? removeFile(json, in: .tmp)
                results[order[n]] = .rejected("\(p.item.source.label) vanished before it was taken; left to whoever moved it")
                continue
            }
            CrashPoint.addAfterBlobRename.reached()
            try fs.rename(json, in: descriptor(.tmp), to: json, in: descriptor(folder))
            CrashPoint.addAfterJSONRename.reached()
            dirty.insert(folder)
            results[order[n]] = .added(p.item.id)
        }
        if wholeFileSystem { try syncFileSystem() } else {
            try syncFolders(dirty)
            for subfolder in dirtySubfolders.values { try fs.sync(subfolder, label: "\(path)/incoming/...") }
        }
        CrashPoint.addAfterFolderSync.reached()
        for unlink in sourcesToUnlink {
            switch unlink {
            case .incoming(let folder, let name): try? fs.remove(name, in: folder, isDirectory: false)
            case .path(let source): try? fs.remove(source, in: FileDescriptor(rawValue: AT_FDCWD), isDirectory: false)
            }
        }
        return results.map { $0! }
    }

    /// Moves an item's json alone to `to` with new contents (its blob is gone): recorded in the
    /// index like any transition, so `show` can explain why the item is in failed/.
    public func quarantine(_ id: ItemID, from: ItemLocation, to: ItemLocation, metadata: ItemMetadata?) throws {
        try whileRecoveryWaits { try quarantineUnguarded(id, from: from, to: to, metadata: metadata) }
    }

    private func quarantineUnguarded(_ id: ItemID, from: ItemLocation, to: ItemLocation, metadata: ItemMetadata?) throws {
        let fromName = jsonName(id, from)
        let toName = jsonName(id, to)
        let fromFolder = SpoolFolder(from.state)
        let toFolder = SpoolFolder(to.state)
        // Staged (and fsynced) before the record, as in `commit`: once the record exists, recovery
        // may trust the staged json (it carries the failure reason).
        // Only this half is tried again from the reserve: nothing has moved yet.
        try usingReserveWhenFull {
            if let metadata { try stageMetadata(metadata, as: toName, notBefore: nil) }
            try index.append([IndexRecord(.fail, id, from: from, to: to)])
        }
        if metadata != nil {
            try fs.rename(toName, in: descriptor(.tmp), to: toName, in: descriptor(toFolder))
            if fromFolder != toFolder || fromName != toName { try removeFile(fromName, in: fromFolder) }
        } else if fromFolder != toFolder || fromName != toName {
            try fs.rename(fromName, in: descriptor(fromFolder), to: toName, in: descriptor(toFolder))
        }
        try syncFolders([.tmp, fromFolder, toFolder])
    }

    /// Compacts the index to its live state: the records recovery would still need. Every folder
    /// is synced first, so every transition recorded so far is complete and durable (the claim
    /// and done records that stood in for folder fsyncs are no longer needed): the live state is
    /// empty, and the new index is just its header. The folders hold the items. Never while a
    /// commit is in progress (`commitsInProgress`): its records are not all durable or complete.
    public func compactIndex() throws {
        precondition(commitsInProgress == 0, "the index is compacted while a commit is in progress")
        // Dropping a `done` record is safe only once its files are gone (and that is durable).
        try reaper.drain()
        try syncFolders(Set(SpoolFolder.allCases))
        try index.compact(live: [])
    }

    /// Runs `body` (start-up recovery) holding `tmp/` exclusively: no `enqueue`, `retry` or `purge`
    /// is between its first staged file and its last rename meanwhile (`sharesStagingWithRecovery`).
    /// Waits for those in progress to finish.
    ///
    /// flock(2) does not make new shared holders wait for a waiting exclusive one, so a stream of
    /// overlapping `enqueue` calls could keep a daemon from ever starting. Both sides first pass a
    /// turnstile, an exclusive flock on the spool's root directory: recovery holds it while it
    /// waits, a stager only until it has its shared lock.
    public func excludingStagers<T>(_ body: () throws -> T) throws -> T {
        let tmp = descriptor(.tmp)
        _ = try fs.lock(root, exclusive: true, wait: true)
        defer { _ = try? fs.unlock(root) }
        _ = try fs.lock(tmp, exclusive: true, wait: true)
        holdsStagingExclusively = true
        defer {
            holdsStagingExclusively = false
            _ = try? fs.unlock(tmp)
        }
        return try body()
    }

    /// Gives up the multipart uploads of `ids` (`PartLogFolder.giveUp`: each abort recorded as
    /// owed before its part log goes), kept apart from a recovery as staging is, since recovery
    /// rewrites `parts/aborts.log`. Returns the owed aborts; ids whose abort cannot be recorded
    /// keep their logs and are returned in `unrecorded` with why.
    public func giveUpMultipartUploads(of ids: [ItemID], now: Timestamp) throws -> (owed: [OwedAbort], unrecorded: [(ItemID, String)]) {
        try whileRecoveryWaits {
            var owed: [OwedAbort] = []
            var unrecorded: [(ItemID, String)] = []
            for id in ids {
                do {
                    if let abort = try partLogs.giveUp(id, now: now) { owed.append(abort) }
                } catch let refusal as PartJournalRefusal {
                    unrecorded.append((id, refusal.description))
                }
            }
            return (owed, unrecorded)
        }
    }

    /// The shared side of `excludingStagers`, for processes that set `sharesStagingWithRecovery`.
    private func whileRecoveryWaits<T>(_ body: () throws -> T) throws -> T {
        guard sharesStagingWithRecovery && !holdsStagingExclusively else { return try body() }
        let tmp = descriptor(.tmp)
        _ = try fs.lock(root, exclusive: true, wait: true)
        do {
            _ = try fs.lock(tmp, exclusive: false, wait: true)
        } catch {
            _ = try? fs.unlock(root)
            throw error
        }
        _ = try? fs.unlock(root)
        defer { _ = try? fs.unlock(tmp) }
        return try body()
    }

    /// Waits for the removals `apply(removingInBackground:)` handed over; throws if one failed.
    public func drainRemovals() throws { try reaper.drain() }

    /// fsyncs each folder once: the "group" in group commit.
    func syncFolders(_ folders: Set<SpoolFolder>, file: StaticString = #fileID, line: UInt = #line) throws {
        for folder in SpoolFolder.allCases where folders.contains(folder) {
            try fs.sync(descriptor(folder), label: "\(path)/\(folder.rawValue)", at: SourceLocation(file: file, line: line))
        }
    }

    /// Removes a file from a folder (recovery of orphans, purge); a missing file is fine.
    func removeFile(_ name: String, in folder: SpoolFolder) throws {
        do { try fs.remove(name, in: descriptor(folder), isDirectory: false) } catch let e as SystemError where e.isNotFound {}
    }

    /// Renames one file between folders (recovery completing a split pair).
    func moveFile(_ name: String, from: SpoolFolder, to newName: String, in folder: SpoolFolder) throws {
        try fs.rename(name, in: descriptor(from), to: newName, in: descriptor(folder))
    }

    /// Writes a json for an item into a folder directly (recovery re-creating lost metadata).
    func writeMetadata(_ metadata: ItemMetadata, named name: String, in folder: SpoolFolder) throws {
        try usingReserveWhenFull { _ = try stageMetadata(metadata, as: name, notBefore: nil) }
        try fs.rename(name, in: descriptor(.tmp), to: name, in: descriptor(folder))
    }

    /// Moves an entry spoold cannot use (a folder named like an item file, a FIFO in tmp/) into
    /// `SPOOL/corrupt/` as `<folder>.<name>.<time>-<pid>-<random>`, kept for the operator and never
    /// deleted: bad state is set aside, never a reason to stop. Returns its new path in the spool.
    /// A missing entry (a lost race) throws ENOENT.
    @discardableResult
    func setAside(_ name: String, in folder: SpoolFolder, now: Timestamp) throws -> String {
        let corruptName = SpoolFolder.corruptFolderName
        do { try fs.makeDirectory(corruptName, in: root, mode: 0o700) } catch let e as SystemError where e.errno == .fileExists {}
        let corrupt: FileDescriptor
        do {
            corrupt = try fs.open(corruptName, relativeTo: root, flags: [.directory], mode: 0)
        } catch let error as SystemError where error.errno == .tooManySymbolicLinkLevels || error.errno == .notDirectory {
            throw SpoolError.notAFolder("\(path)/\(corruptName)")
        }
        return try fs.closing(corrupt) { corrupt in
            let aside = "\(folder.rawValue).\(name).\(now.compact)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try fs.rename(name, in: descriptor(folder), to: aside, in: corrupt)
            try fs.sync(corrupt, label: "\(path)/\(corruptName)")
            try fs.sync(descriptor(folder), label: "\(path)/\(folder.rawValue)")
            return "\(corruptName)/\(aside)"
        }
    }

    func setModificationTime(_ name: String, in folder: SpoolFolder, to time: Timestamp) throws {
        let fd = try fs.open(name, relativeTo: descriptor(folder), flags: [.readOnly, .nonBlocking], mode: 0)
        try fs.closing(fd) { fd in try fs.setModificationTime(fd, milliseconds: time.millisecondsSinceEpoch) }
    }

    // MARK: Helpers

    /// A full disk before anything of an add was kept is `SpoolError.outOfSpace`: the daemon pauses
    /// intake on it, `enqueue` says so. A failed fsync stays what it is: never retried and trusted.
    private func nothingAdded(_ error: any Error) -> any Error {
        guard let e = error as? SystemError, e.isOutOfSpace, !e.isSyncFailure else { return error }
        return SpoolError.outOfSpace(path: path, cause: e)
    }

    /// Runs `body`; if it finds the disk full (not a failed fsync), releases the reserve and runs
    /// it once more. `body` must leave nothing half-done when it throws (the index truncates a
    /// partial append away; staged files are staged afresh).
    private func usingReserveWhenFull<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SystemError
            where error.isOutOfSpace && !error.isSyncFailure && mayReleaseReserve && reserve.release()
        {
            return try body()
        }
    }

    private func jsonName(_ id: ItemID, _ location: ItemLocation) -> String {
        ItemFileName(id: id, attempt: location.attempt, kind: .json).description
    }

    /// Writes `metadata` as `tmp/<name>` (a spare json reused if there is one), fsynced unless
    /// `sync` is false. `keepOpen`: not synced, and its descriptor returned for the caller to
    /// sync and close (`SyncWork`).
    @discardableResult
    private func stageMetadata(
        _ metadata: ItemMetadata, as name: String, notBefore: Timestamp?, sync: Bool = true, keepOpen: Bool = false,
        file: StaticString = #fileID, line: UInt = #line
    ) throws -> FileDescriptor? {
        let fd: FileDescriptor
        /// The size of a reused spare before it is overwritten (0 for a new file).
        let oldSize: Int64
        if let spare = takeSpareJSON(as: name) {
            (fd, oldSize) = spare
        } else {
            try removeFile(name, in: .tmp)
            (fd, oldSize) = (try fs.open(name, relativeTo: descriptor(.tmp), flags: [.writeOnly, .create, .exclusive], mode: 0o600), 0)
        }
        do {
            let bytes = MetadataCodec.encode(metadata)
            try fs.writeAll(fd, bytes, label: "tmp/\(name)")
            // Written from offset 0: only a longer old content leaves bytes to cut (jsons of
            // small items mostly have the same length, and an ftruncate costs a journal update).
            if oldSize > Int64(bytes.count) { try fs.truncate(fd, to: Int64(bytes.count)) }
            if let notBefore { try fs.setModificationTime(fd, milliseconds: notBefore.millisecondsSinceEpoch) }
            if keepOpen { return fd }
            if sync { try fs.sync(fd, label: "tmp/\(name)", at: SourceLocation(file: file, line: line)) }
            fs.close(fd)
            return nil
        } catch {
            fs.close(fd)
            try? removeFile(name, in: .tmp)
            throw error
        }
    }

    /// Whether a name in tmp/ is one of a daemon's spare jsons (`spare.N`).
    public static func isSpareJSON(_ name: String) -> Bool { name.hasPrefix("spare.") }

    /// Keeps an uploaded item's json (its success is recorded) as a spare in tmp/, if there is
    /// room in the pool; false: the caller removes it.
    private func keepAsSpare(_ json: String, in folder: SpoolFolder) -> Bool {
        guard spareJSONs.count < spareJSONLimit else { return false }
        let spare = "spare.\(spareJSONCounter)"
        guard (try? fs.rename(json, in: descriptor(folder), to: spare, in: descriptor(.tmp))) != nil else { return false }
        spareJSONCounter &+= 1
        spareJSONs.append(spare)
        return true
    }

    /// A spare json renamed to `name` in tmp/ and opened for writing, with its size, or nil when
    /// none is usable. Reused only if still the file this process kept: regular, one link, ours,
    /// mode 0600 (the `O_CREAT|O_EXCL` file a new item is staged as); anything else is removed.
    private func takeSpareJSON(as name: String) -> (FileDescriptor, size: Int64)? {
        let tmp = descriptor(.tmp)
        while let spare = spareJSONs.popLast() {
            guard let fd = try? fs.open(spare, relativeTo: tmp, flags: [.writeOnly, .nonBlocking], mode: 0) else { continue }
            if let status = try? fs.status(of: fd), status.type == .regular, status.linkCount == 1,
               status.owner == Spool.effectiveUser, status.permissions == 0o600,
               (try? fs.rename(spare, in: tmp, to: name, in: tmp)) != nil
            {
                return (fd, status.size)
            }
            fs.close(fd)
            try? removeFile(spare, in: .tmp)
        }
        return nil
    }

    /// Removes the spare jsons (when the daemon goes idle or stops: tmp/ is left empty).
    public func removeSpareJSONs() {
        for spare in spareJSONs { try? removeFile(spare, in: .tmp) }
        spareJSONs.removeAll()
    }

    private func cleanUpStaged(_ items: [NewItem]) {
        for item in items {
            try? removeFile(jsonName(item.id, ItemLocation(item.state, attempt: 0)), in: .tmp)
            try? removeFile(ItemFileName(id: item.id, attempt: 0, kind: .blob).description, in: .tmp)
        }
    }

    private struct ItemRejection: Error { var reason: String }

    private struct PreparedBlob {
        enum Kind {
            case staged, renameFromIncoming(String), renameFromPath(String)
            /// The blob is the producer's own file, renamed in: it can vanish before the rename.
            var isRename: Bool { if case .staged = self { false } else { true } }
        }
        /// A source consumed by copying: removed once the item is durable.
        enum Unlink { case incoming(folder: FileDescriptor, name: String), path(String) }
        var kind: Kind
        var size: Int64
        var unlinkAfterCommit: Unlink?
        /// The subfolder of incoming/ holding the source (nil: incoming/ itself), open for the add.
        var incomingSubfolder: FileDescriptor?
        /// The source's inode when it was prepared: a file renamed in under its name since is not it.
        var inode: UInt64 = 0

    }

    /// A rename's source, to remove once it was copied instead (`copyInsteadOfRenaming`).
    private func source(of blob: PreparedBlob) -> PreparedBlob.Unlink {
        switch blob.kind {
        case .renameFromIncoming(let name): .incoming(folder: blob.incomingSubfolder ?? descriptor(.incoming), name: name)
        case .renameFromPath(let path): .path(path)
        case .staged: preconditionFailure("a staged blob has no source to rename")
        }
    }

    /// Copies a rename's source into `folder` as `blob` instead (through tmp/, synced), when the
    /// rename failed with EXDEV. Returns why the file was not taken after all (it was replaced or
    /// changed since it was prepared), or nil once the copy is in place.
    private func copyInsteadOfRenaming(_ blob: PreparedBlob, as name: String, into folder: SpoolFolder) throws -> String? {
        let fd: FileDescriptor
        do {
            switch blob.kind {
            case .renameFromIncoming(let leaf):
                fd = try fs.open(leaf, relativeTo: blob.incomingSubfolder ?? descriptor(.incoming), flags: [.readOnly, .nonBlocking], mode: 0)
            case .renameFromPath(let path):
                fd = try fs.open(path, relativeTo: nil, flags: [.readOnly, .nonBlocking, .followSymlinks], mode: 0)
            case .staged:
                preconditionFailure("a staged blob is renamed from tmp/")
            }
        } catch let error as SystemError where error.isNotFound {
            return "vanished before it was taken; left to whoever moved it"
        }
        defer { fs.close(fd) }
        let status = try fs.status(of: fd)
        guard status.type == .regular, status.inode == blob.inode, status.size == blob.size else {
            return "was replaced or changed while it was taken; left alone"
        }
        let copied = try copyToTmp(from: fd, as: name, sync: true)
        guard copied == blob.size else {
            try? removeFile(name, in: .tmp)
            return "changed size while it was copied; left alone"
        }
        try fs.rename(name, in: descriptor(.tmp), to: name, in: descriptor(folder))
        return nil
    }

    /// Opens the source safely (no links followed in incoming/ or its subfolders, never blocking
    /// on a FIFO), checks it is a regular file, and either fsyncs it for a rename or copies it
    /// into tmp/. A source in a subfolder of incoming/ keeps that folder open in the result.
    /// - Parameter folders: the subfolders of incoming/ this batch has open, by path; a source's
    ///   folder is opened once and added there (the caller closes them).
    private func prepareBlob(for item: NewItem, sync: Bool, folders: inout [String: FileDescriptor]) throws -> PreparedBlob {
        switch item.source {
        case .incoming(let path):
            let label = item.source.label
            var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
            let leaf = components.popLast() ?? ""
            let folderPath = components.joined(separator: "/")
            let fd: FileDescriptor
            let folder: FileDescriptor
            do {
                if components.isEmpty {
                    folder = descriptor(.incoming)
                } else if let open = folders[folderPath] {
                    folder = open
                } else {
                    folder = try openIncomingFolder(components)
                    folders[folderPath] = folder
                }
                guard !leaf.isEmpty else { throw SystemError(.open, path: label, errno: .noSuchFileOrDirectory) }
                fd = try fs.open(leaf, relativeTo: folder, flags: [.readOnly, .nonBlocking], mode: 0)
            }
            catch let e as SystemError where e.errno == .tooManySymbolicLinkLevels { throw ItemRejection(reason: "\(label) is a symbolic link; left alone") }
            catch let e as SystemError where e.errno == .noSuchFileOrDirectory || e.errno == .permissionDenied || e.errno == .noSuchAddressOrDevice || e.errno == .notDirectory {
                throw ItemRejection(reason: "\(label): \(e.errno)")
            }
            defer { fs.close(fd) }
            var blob = try prepareBlob(for: item, opened: fd, label: label, incoming: (folder, leaf), sync: sync)
            if !components.isEmpty { blob.incomingSubfolder = folder }
            return blob
        case .external(let path, _):
            let fd: FileDescriptor
            do { fd = try fs.open(path, relativeTo: nil, flags: [.readOnly, .nonBlocking, .followSymlinks], mode: 0) }
            catch let e as SystemError where !e.isOutOfSpace && e.errno != .ioError {
                throw ItemRejection(reason: "\(path): \(e.errno)")
            }
            defer { fs.close(fd) }
            return try prepareBlob(for: item, opened: fd, label: path, incoming: nil, sync: sync)
        }
    }

    private func prepareBlob(
        for item: NewItem, opened fd: FileDescriptor, label: String, incoming: (folder: FileDescriptor, name: String)?,
        sync: Bool
    ) throws -> PreparedBlob {
        let status = try fs.status(of: fd)
        guard status.type == .regular else {
            throw ItemRejection(reason: "\(label) is not a regular file (\(status.type)); left alone")
        }
        let sameFileSystem = status.device == device
        if case .incoming = item.source, status.linkCount > 1, !takesHardLinkedFiles {
            throw ItemRejection(reason: """
                \(label) has \(status.linkCount) hard links: a file linked into incoming/ may be anyone's, not its producer's; \
                left alone (--allow-hardlinks takes such files)
                """)
        }
        switch item.source {
        case .incoming where sameFileSystem && status.linkCount == 1:
            if sync { try fs.sync(fd, label: label) }
            return PreparedBlob(kind: .renameFromIncoming(incoming!.name), size: status.size, inode: status.inode)
        case .external(let path, true) where sameFileSystem && status.linkCount == 1:
            if sync { try fs.sync(fd, label: label) }
            return PreparedBlob(kind: .renameFromPath(path), size: status.size, inode: status.inode)
        default:
            let size = try copyToTmp(from: fd, as: ItemFileName(id: item.id, attempt: 0, kind: .blob).description, sync: sync)
            var blob = PreparedBlob(kind: .staged, size: size)
            switch item.source {
            case .incoming: blob.unlinkAfterCommit = .incoming(folder: incoming!.folder, name: incoming!.name)
            case .external(let path, true): blob.unlinkAfterCommit = .path(path)
            case .external: break
            }
            return blob
        }
    }

    private func copyToTmp(from source: FileDescriptor, as name: String, sync: Bool) throws -> Int64 {
        try removeFile(name, in: .tmp)
        let out = try fs.open(name, relativeTo: descriptor(.tmp), flags: [.writeOnly, .create, .exclusive], mode: 0o600)
        var total: Int64 = 0
        do {
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = try buffer.withUnsafeMutableBytes { try fs.read(source, into: $0) }
                if n == 0 { break }
                try buffer.withUnsafeBytes { try fs.writeAll(out, UnsafeRawBufferPointer(rebasing: $0[0..<n]), label: "tmp/\(name)") }
                total += Int64(n)
            }
            if sync { try fs.sync(out, label: "tmp/\(name)") }
            fs.close(out)
        } catch {
            fs.close(out)
            try? removeFile(name, in: .tmp)
            throw error
        }
        return total
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        var base = String(cString: cwd)
        if base.hasSuffix("/") { base.removeLast() }
        var rest = Substring(path)
        while rest.hasPrefix("./") { rest = rest.dropFirst(2) }
        return rest.isEmpty || rest == "." ? base : "\(base)/\(rest)"
    }
}
