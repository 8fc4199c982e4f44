import Glibc
import SpoolCore
import SpoolSystem

/// The write-ahead index, `SPOOL/index.wal`: append-only, framed and checksummed records.
///
/// Several processes append (the daemon, `spoold enqueue`, `retry`, `purge`), so each append holds
/// flock(2) on the file and first checks that its descriptor still names the live file: compaction
/// replaces it by rename, and a writer holding the old one reopens. The directories are the truth;
/// the index records intent so that a crash between the two renames of a pair can be completed.
public final class IndexFile {
    /// What opening the index found, for the log.
    public struct OpenReport: Equatable, Sendable {
        public var records: Int = 0
        /// Bytes of torn or garbage tail cut away.
        public var truncatedBytes: Int = 0
        /// Set when a damaged record before the tail made us set the file aside.
        public var setAsideAs: String?
        /// Set when `index.wal` was not a regular file (a folder, a FIFO, a symlink) and was set
        /// aside under this name, so a fresh index could be started.
        public var notAFileSetAsideAs: String?
    }

    private let fs: any FileSystem
    private let root: FileDescriptor
    private var fd: FileDescriptor?
    private var identity: (device: UInt64, inode: UInt64)?
    /// Size of the index file as this process last knew it (after open, appends, compaction).
    public private(set) var appendedBytes: Int64 = 0
    /// Size right after the last compaction: the live state's own size.
    public private(set) var compactedBytes: Int64 = 0

    /// Compaction pays off once the file holds mostly history: twice the live state, and at least 8 MiB.
    public var wantsCompaction: Bool { appendedBytes > IndexFile.compactionSize(after: compactedBytes) }

    /// Compaction is overdue: the file has grown twice past the size where it was wanted (a
    /// daemon that never had a quiet moment to compact in).
    public var needsCompaction: Bool { appendedBytes > 2 * IndexFile.compactionSize(after: compactedBytes) }

    private static func compactionSize(after compacted: Int64) -> Int64 { max(8 << 20, 2 * compacted) }

    public init(root: FileDescriptor, fs: any FileSystem) {
        self.root = root
        self.fs = fs
    }

    /// Descriptors of files replaced since the last compaction, closed by the next one (no sync
    /// handed over is waiting then): a sync waiting on one must not hit a file opened later under
    /// its number.
    private var retired: [FileDescriptor] = []

    deinit {
        if let fd { fs.close(fd) }
        for fd in retired { fs.close(fd) }
    }

    /// Reads the index, repairing what a crash may leave (a torn tail is cut, damage before it sets the file aside and the folders are read instead), and returns the last
    /// record per item: the intent to complete for a pair split by a crash.
    public func openAndRecover(now: Timestamp) throws -> (lastByItem: [ItemID: IndexRecord], report: OpenReport) {
        let file: FileDescriptor
        var notAFile: String?
        do {
            file = try reopen()
        } catch let error as SystemError where IndexFile.meansNotAFile(error.errno) {
            // Bad state is set aside, never a reason to refuse to start: keep it, begin afresh.
            let name = IndexFile.asideName(now: now)
            try fs.rename(SpoolFolder.indexFileName, in: root, to: name, in: root)
            try fs.sync(root, label: "spool directory")
            notAFile = name
            file = try reopen()
        }
        guard try fs.lock(file, exclusive: true, wait: true) else { return ([:], OpenReport(notAFileSetAsideAs: notAFile)) }
        defer { _ = try? unlock(file) }
        guard let bytes = try fs.readAll(file, limit: 512 << 20) else {
            return ([:], try setAside(file, now: now, reason: OpenReport(notAFileSetAsideAs: notAFile)))
        }
        let scan = IndexLogCodec.decode(bytes)
        var report = OpenReport(records: scan.records.count, notAFileSetAsideAs: notAFile)
        switch scan.damage {
        case .none:
            if bytes.isEmpty { try writeHeader(file) }
        case .tornTail(let offset, let length):
            report.truncatedBytes = length
            try fs.truncate(file, to: Int64(offset))
            if offset == 0 { try writeHeader(file) }
            try fs.sync(file, label: SpoolFolder.indexFileName)
        case .corruptMiddle:
            report = try setAside(file, now: now, reason: report)
        }
        var last: [ItemID: IndexRecord] = [:]
        for record in scan.records { last[record.id] = record }
        appendedBytes = Int64(scan.validLength)
        return (last, report)
    }

    /// Reads the index without changing anything (for `spoold check`): the last record per item as
    /// `openAndRecover` would return it, and what it would repair. A missing index is an empty one.
    /// `isRegularFile` is false when `index.wal` is a folder, a symlink or another non-file, which
    /// recovery sets aside.
    public func inspect() throws -> (lastByItem: [ItemID: IndexRecord], damage: IndexLogScan.Damage, isRegularFile: Bool) {
        let file: FileDescriptor
        do {
            file = try fs.open(SpoolFolder.indexFileName, relativeTo: root, flags: [.readOnly, .nonBlocking], mode: 0)
        } catch let error as SystemError where error.isNotFound {
            return ([:], .none, true)
        } catch let error as SystemError where IndexFile.meansNotAFile(error.errno) {
            return ([:], .none, false)
        }
        return try fs.closing(file) { file in
            guard try fs.status(of: file).type == .regular else { return ([:], .none, false) }
            guard let bytes = try fs.readAll(file, limit: 512 << 20) else {
                return ([:], .corruptMiddle(offset: 0), true)
            }
            let scan = IndexLogCodec.decode(bytes)
            if case .corruptMiddle = scan.damage { return ([:], scan.damage, true) }  // recovery rebuilds from the folders
            var last: [ItemID: IndexRecord] = [:]
            for record in scan.records { last[record.id] = record }
            return (last, scan.damage, true)
        }
    }

    /// Appends records and makes them durable before returning (one fsync for the whole batch).
    /// - Parameter sync: false when the caller makes them durable itself, with one `syncfs` for
    ///   a whole batch of files, before it relies on them.
    public func append(_ records: [IndexRecord], sync: Bool = true, file: StaticString = #fileID, line: UInt = #line) throws {
        guard !records.isEmpty else { return }
        let site = SourceLocation(file: file, line: line)
        var bytes: [UInt8] = []
        for record in records { bytes += IndexLogCodec.encode(record) }
        while true {
            let file = try currentDescriptor()
            guard try fs.lock(file, exclusive: true, wait: true) else { continue }
            // Compaction may have renamed a new file over the one we hold: then reopen and retry.
            if try isStale(file) {
                try unlock(file)
                _ = try reopen()
                continue
            }
            defer { _ = try? unlock(file) }
            // A brand-new index (first command on a fresh spool) starts with its header.
            let end = try fs.seekToEnd(file)
            let framed = end == 0 ? IndexLogCodec.encodeHeader() + bytes : bytes
            do {
                try fs.writeAll(file, framed, label: SpoolFolder.indexFileName)
            } catch {
                // A short write (a full disk) must not leave half a record for the next append
                // to follow: that would be damage in the middle, not a torn tail.
                try? fs.truncate(file, to: end)
                throw error
            }
            if sync { try fs.sync(file, label: SpoolFolder.indexFileName, at: site) }
            appendedBytes += Int64(framed.count)
            return
        }
    }

    /// The descriptor whose fsync makes the records appended so far durable (for appends made
    /// with `sync: false`), handed to whoever syncs them (`SyncWork`, maybe on another thread).
    /// It stays open until the next compaction even if the file is replaced meanwhile.
    func descriptorForSync() throws -> FileDescriptor { try currentDescriptor() }

    /// Rewrites the index as its header plus `live` (the records recovery would still need; the
    /// spool passes none, having synced every folder first), then renames it over the old file,
    /// so a daemon that runs for months keeps a small index.
    /// No sync handed over (`descriptorForSync`) may be waiting.
    public func compact(live: [IndexRecord]) throws {
        for old in retired { fs.close(old) }
        retired.removeAll()
        let file = try currentDescriptor()
        guard try fs.lock(file, exclusive: true, wait: true) else { return }
        defer { _ = try? unlock(file) }
        let tmpName = SpoolFolder.indexFileName + ".compact"
        try? fs.remove(tmpName, in: root, isDirectory: false)
        var bytes = IndexLogCodec.encodeHeader()
        for record in live { bytes += IndexLogCodec.encode(record) }
        let fresh: FileDescriptor
        do {
            fresh = try fs.open(tmpName, relativeTo: root, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
        } catch let error as SystemError where error.isOutOfSpace && live.isEmpty {
            return try compactInPlace(file)
        }
        do {
            try fs.writeAll(fresh, bytes, label: tmpName)
            try fs.sync(fresh, label: tmpName)
        } catch {
            fs.close(fresh)
            try? fs.remove(tmpName, in: root, isDirectory: false)
            if let e = error as? SystemError, e.isOutOfSpace, !e.isSyncFailure, live.isEmpty { return try compactInPlace(file) }
            throw error
        }
        fs.close(fresh)
        CrashPoint.compactAfterWrite.reached()
        try fs.rename(tmpName, in: root, to: SpoolFolder.indexFileName, in: root)
        CrashPoint.compactAfterRename.reached()
        try fs.sync(root, label: "spool directory")
        appendedBytes = Int64(bytes.count)
        compactedBytes = Int64(bytes.count)
        // The old descriptor now names an unlinked file; writers (us included) notice and reopen.
    }

    /// Compaction on a full disk, where no new file fits: with nothing live to keep, the index is
    /// cut back to its header where it is (`ftruncate(2)` needs no space and frees the rest). A
    /// crash leaves the old file or the cut one, both valid. Skipped if the file does not start
    /// with the header (it then stays as it is).
    private func compactInPlace(_ file: FileDescriptor) throws {
        let header = IndexLogCodec.encodeHeader()
        let reader = try fs.open(SpoolFolder.indexFileName, relativeTo: root, flags: [.readOnly, .nonBlocking], mode: 0)
        let start: [UInt8] = try fs.closing(reader) { reader in
            var buffer = [UInt8](repeating: 0, count: header.count)
            var filled = 0
            while filled < header.count {
                let n = try buffer.withUnsafeMutableBytes { try fs.read(reader, into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
                if n == 0 { break }
                filled += n
            }
            return Array(buffer[0..<filled])
        }
        guard start == header, !(try isStale(file)) else { return }
        try fs.truncate(file, to: Int64(header.count))
        try fs.sync(file, label: SpoolFolder.indexFileName)
        appendedBytes = Int64(header.count)
        compactedBytes = Int64(header.count)
    }

    private func currentDescriptor() throws -> FileDescriptor {
        if let fd { return fd }
        return try reopen()
    }

    @discardableResult
    private func reopen() throws -> FileDescriptor {
        // A sync handed over may still be waiting to be made on it (`descriptorForSync`).
        if let fd { retired.append(fd) }
        fd = nil
        let file = try fs.open(
            SpoolFolder.indexFileName, relativeTo: root, flags: [.readWrite, .create, .append], mode: 0o600)
        let status = try fs.status(of: file)
        guard status.type == .regular else {
            fs.close(file)
            throw SystemError(.open, path: SpoolFolder.indexFileName, errno: .isDirectory)  // not a regular file
        }
        fd = file
        identity = (status.device, status.inode)
        return file
    }

    /// `index.wal.corrupt-<time>-<pid>-<random>`: unique even for two damaged indexes in one
    /// millisecond (devices without a clock boot at the same time every time), so the evidence
    /// is never renamed over.
    private static func asideName(now: Timestamp) -> String {
        "\(SpoolFolder.indexFileName).corrupt-\(now.compact)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// What opening `index.wal` read-write answers when it is not a regular file: a folder
    /// (EISDIR), a symlink (ELOOP, we never follow one), a socket (ENXIO); `reopen` reports a FIFO
    /// or a device as EISDIR too.
    public static func meansNotAFile(_ errno: Errno) -> Bool {
        errno == .isDirectory || errno == .tooManySymbolicLinkLevels || errno == .noSuchAddressOrDevice
    }

    private func isStale(_ file: FileDescriptor) throws -> Bool {
        guard let onDisk = try? fs.status(of: SpoolFolder.indexFileName, in: root) else { return true }
        return onDisk.inode != identity?.inode || onDisk.device != identity?.device
    }

    private func unlock(_ file: FileDescriptor) throws { try fs.unlock(file) }

    /// Writes the header into an empty index. On a full disk it leaves the file empty instead: the
    /// first append writes the header with its records.
    private func writeHeader(_ file: FileDescriptor) throws {
        do {
            try fs.writeAll(file, IndexLogCodec.encodeHeader(), label: SpoolFolder.indexFileName)
        } catch let error as SystemError where error.isOutOfSpace {
            try fs.truncate(file, to: 0)
            return
        }
        try fs.sync(file, label: SpoolFolder.indexFileName)
    }

    /// Keeps a damaged index for inspection (never deletes it) and starts a fresh one; start-up
    /// recovery then rebuilds from the directories.
    private func setAside(_ file: FileDescriptor, now: Timestamp, reason: OpenReport) throws -> OpenReport {
        var report = reason
        let name = IndexFile.asideName(now: now)
        try fs.rename(SpoolFolder.indexFileName, in: root, to: name, in: root)
        try fs.sync(root, label: "spool directory")
        report.setAsideAs = name
        report.records = 0
        let fresh = try reopen()
        try writeHeader(fresh)
        return report
    }
}
