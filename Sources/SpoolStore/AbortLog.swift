import Glibc
import SpoolCore
import SpoolSystem
import Synchronization

/// `SPOOL/parts/aborts.log` (`AbortLogCodec`): the AbortMultipartUpload requests spoold still
/// owes the store. Absent while nothing is owed.
///
/// An upload is given up when its item fails or is purged, or when a new upload replaces it;
/// its part log, the only place that named it, then goes. So the abort is recorded here first:
/// `owe` appends an `abort` record and fsyncs it (and parts/ when it made the file) before it
/// returns, and only then may the part log go. The daemon sends the owed aborts, again and again
/// while the store does not answer (`AbortSchedule`), and `confirmed` appends an `aborted` record
/// once it does (unsynced: if a crash loses it, the abort is sent once more and the store answers
/// NoSuchUpload, which confirms it too). Start-up recovery (`tidy`, holding the spool
/// exclusively) removes the file once nothing is owed and drops the confirmed records otherwise.
///
/// The daemon and `purge` may append at the same time: each record is one `write(2)` with
/// O_APPEND, so records never interleave; within a process, one lock. A record appended after a
/// torn tail (a crash mid-append) starts on a new line, so it is never read as part of the tail.
public final class AbortLog: @unchecked Sendable {
    public static let fileName = "aborts.log"
    private let folder: PartLogFolder

    init(folder: PartLogFolder) { self.folder = folder }

    var label: String { folder.label(AbortLog.fileName) }

    /// What the log holds; an empty scan when there is none (or it cannot be read).
    public func scan() -> AbortLogCodec.Scan {
        guard let bytes = folder.read(AbortLog.fileName) else { return AbortLogCodec.Scan() }
        return AbortLogCodec.decode(bytes)
    }

    /// The aborts owed, oldest first.
    public var owed: [OwedAbort] { scan().owed }

    /// Records `aborts` as owed, durable when it returns. Throws `PartJournalRefusal` for an
    /// upload too long to record (nothing written), anything else when the spool failed.
    public func owe(_ aborts: [OwedAbort]) throws {
        try oweUnsynced(aborts).perform()
    }

    /// Writes `aborts` as owed, not synced; returns the syncs that make them durable (the log's
    /// fsync, and parts/'s when it made the file), for the caller to make (the engine hands them
    /// to the thread that makes the spool's syncs). Throws as `owe`.
    public func oweUnsynced(_ aborts: [OwedAbort]) throws -> SyncWork {
        guard !aborts.isEmpty else { return SyncWork(fs: folder.fs, calls: []) }
        var records: [UInt8] = []
        for abort in aborts {
            guard let record = AbortLogCodec.encodeOwed(abort) else {
                throw PartJournalRefusal("the upload id or URL of \(abort.id)'s multipart upload is too long to record")
            }
            records += record
        }
        return try appendKeepingOpen(records)
    }

    /// Records that the store confirmed aborting `uploadID` (or no longer has it). Not synced.
    public func confirmed(_ uploadID: String) throws {
        guard let record = AbortLogCodec.encodeConfirmed(uploadID: uploadID) else { return }
        try appendUnsynced(record)
    }

    private func appendUnsynced(_ record: [UInt8]) throws {
        try folder.abortsAppending.withLock { _ in
            let (fd, _) = try openAndWrite(record)
            folder.fs.close(fd)
        }
    }

    /// Appends `record` and returns the syncs that make it durable: the descriptor's fsync (it
    /// is closed after), and parts/'s when the file was made.
    private func appendKeepingOpen(_ record: [UInt8], file: StaticString = #fileID, line: UInt = #line) throws -> SyncWork {
        try folder.abortsAppending.withLock { _ in
            let (fd, created) = try openAndWrite(record)
            let site = SourceLocation(file: file, line: line)
            var calls: [SyncWork.Call] = [.sync(fd, label: label, site: site, owned: true)]
            if created { calls.append(.sync(try folder.descriptor(), label: folder.folderLabel, site: site, owned: false)) }
            return SyncWork(fs: folder.fs, calls: calls)
        }
    }

    /// Opens the log to append (made if missing) and writes `record`, on a line of its own after
    /// a torn tail; the caller closes the descriptor.
    private func openAndWrite(_ record: [UInt8]) throws -> (FileDescriptor, created: Bool) {
        let name = AbortLog.fileName
        let startsLine = folder.read(name).map { $0.isEmpty || $0.last == UInt8(ascii: "\n") } ?? true
        let (fd, created) = try folder.openForAppendCreating(name)
        do {
            try folder.fs.writeAll(fd, startsLine ? record : [UInt8(ascii: "\n")] + record, label: label)
        } catch {
            folder.fs.close(fd)
            throw error
        }
        return (fd, created)
    }

    /// What `tidy` did, for recovery's log.
    public struct Tidy: Equatable, Sendable {
        public var owed = 0
        /// Confirmed records dropped (the file rewritten, or removed with nothing owed).
        public var dropped = 0
        /// Lines that are not records: the file is left as it is, for the operator to read.
        public var damagedLines = 0

        public init(owed: Int = 0, dropped: Int = 0, damagedLines: Int = 0) {
            (self.owed, self.dropped, self.damagedLines) = (owed, dropped, damagedLines)
        }
    }

    /// Start-up recovery, holding the spool exclusively (no `purge` appends meanwhile): removes
    /// the log when nothing is owed; otherwise, unless a line is damaged (then it is left for the
    /// operator to read), rewrites it with the owed records only when it holds confirmed ones or
    /// a torn tail: staged in `tmp` (fsynced) and renamed over it, then parts/ fsynced. A crash
    /// in between leaves the old log (and a tmp/ orphan the next recovery removes).
    @discardableResult
    public func tidy(tmp: FileDescriptor) throws -> Tidy {
        try folder.abortsAppending.withLock { _ in
            var result = Tidy()
            guard let bytes = folder.read(AbortLog.fileName) else { return result }
            let scan = AbortLogCodec.decode(bytes)
            (result.owed, result.damagedLines) = (scan.owed.count, scan.damagedLines)
            if scan.owed.isEmpty && scan.damagedLines == 0 {
                folder.remove(AbortLog.fileName)
                result.dropped = scan.confirmed
                return result
            }
            guard scan.damagedLines == 0, scan.confirmed > 0 || !scan.endsInNewline else { return result }
            let fresh = scan.owed.compactMap(AbortLogCodec.encodeOwed).flatMap { $0 }
            let staged = AbortLog.fileName
            do { try folder.fs.remove(staged, in: tmp, isDirectory: false) } catch let e as SystemError where e.isNotFound {}
            let fd = try folder.fs.open(staged, relativeTo: tmp, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
            try folder.fs.closing(fd) { fd in
                try folder.fs.writeAll(fd, fresh, label: label)
                try folder.fs.sync(fd, label: label)
            }
            try folder.renameIn(staged, from: tmp)
            try folder.syncFolder()
            result.dropped = scan.confirmed
            return result
        }
    }
}
