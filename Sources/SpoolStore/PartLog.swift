import SpoolCore
import SpoolSystem
import Synchronization

/// One item's part log, `SPOOL/parts/<id>.log` (`PartLogCodec`): the durable progress of its S3
/// multipart upload (the upload id, then each part's ETag), or of its tus upload (the upload URL,
/// then the offsets the server acknowledged, appended unsynced).
///
/// A log of the other kind (the operator changed `--url` between an s3:// and a tus+ URL while
/// an upload was under way) is read as what it is; the attempt gives it up through the engine,
/// as a start-over: its abort or termination is recorded as owed (durable), then it goes, and the
/// upload starts afresh.
///
/// Append-only, so a state change never needs a rename: `write` of a new upload creates the file
/// (O_EXCL after removing an old one) and writes its first record; `write` of a part appends one
/// record. Neither syncs: each returns the `SyncWork` that makes it durable (the log's fsync, and
/// parts/'s for a new log), which the engine hands to the thread that makes the spool's syncs and
/// waits for before the record counts. A torn tail from a crash is truncated away before the next
/// append.
///
/// One writer: the engine, in its loop. An upload's driver (`S3MultipartAttempt`,
/// `TusUploadAttempt`, on their transport's queue) never writes the log: it asks the engine for
/// each record its machine returns (`PartRecorder`) and goes on once the engine says it is
/// durable. The driver only reads the log as its attempt begins (`load`, before it asks for any
/// record; the load cuts a torn tail and sets a damaged log aside, never syncs). Besides the
/// engine, the sync thread only syncs what was written (the descriptor is shared with the sync
/// handed over: `SharedDescriptor`), and the spool's background thread syncs a direct upload's
/// log once its blob is durable (`makeDurable`). One lock per log.
///
/// The log of a direct upload (`Spool+Direct`) starts with its syncs deferred: its blob is not
/// durable yet, and a record must never be durable before the bytes it vouches for. Its writes
/// survive a kill -9 (the page cache does); `makeDurable`, called once the blob is synced,
/// syncs what was written, and every write after it returns its sync again.
public final class PartLog: @unchecked Sendable {
    public let id: ItemID
    private let folder: PartLogFolder
    /// The open log while an upload appends to it, and whether its writes wait for the blob.
    private let appending: Mutex<Appending>

    private struct Appending {
        var fd: SharedDescriptor?
        var syncDeferred: Bool
    }

    init(id: ItemID, folder: PartLogFolder, syncDeferred: Bool = false) {
        (self.id, self.folder) = (id, folder)
        appending = Mutex(Appending(fd: nil, syncDeferred: syncDeferred))
    }

    var name: String { "\(id).log" }

    /// The recorded upload (an S3 upload with its parts, or a tus upload with the last offset
    /// noted), or nil (none, or a log that does not parse); opens the log to append after its
    /// valid records. A log of the other kind than the attempt's is the attempt's to give up
    /// (`StartOverRecord(otherKind:)`), never this read's: nothing here writes `aborts.log` or syncs.
    public func load() -> LoggedUpload? {
        appending.withLock { state in
            guard let scan = folder.scan(name) else { return nil }
            let logged: LoggedUpload
            if let upload = scan.state {
                logged = .s3(upload)
            } else if let upload = scan.tus {
                logged = .tus(upload, offset: scan.tusOffset)
            } else {
                // Cut while its first record was written: the upload id never counted. Anything
                // else is not a log of ours (or a damaged one): kept aside, never trusted.
                if scan.isTornStart { folder.remove(name) } else { folder.setAside(name) }
                return nil
            }
            guard reopen(&state, at: scan.validLength) else { return nil }
            return logged
        }
    }

    /// Opens the log for appending (once) at the end of its valid records, a torn tail cut away;
    /// false when it cannot be (the upload then starts afresh).
    private func reopen(_ state: inout Appending, at validLength: Int) -> Bool {
        do {
            let shared = try state.fd ?? SharedDescriptor(folder.openForAppend(name), fs: folder.fs)
            state.fd = shared
            let opened = shared.fd
            if try folder.fs.seekToEnd(opened) != Int64(validLength) {
                try folder.fs.truncate(opened, to: Int64(validLength))
                _ = try folder.fs.seekToEnd(opened)
            }
            return true
        } catch {
            return false
        }
    }

    /// Writes `record` (a new S3 or tus upload, or an S3 part), not synced; returns the syncs that
    /// make it durable (none while they wait for a direct upload's blob). Throws
    /// `PartJournalRefusal` for a record too long for the log (nothing written), anything else
    /// when the spool failed. A start-over is not a record of the log (`giveUpUpload`, `discard`).
    public func write(_ record: PartRecord) throws -> SyncWork {
        switch record {
        case .s3Upload(let state):
            guard let header = PartLogCodec.encodeHeader(state) else { throw PartJournalRefusal("the upload id or URL is too long to record") }
            return try begin(header: header)
        case .tusUpload(let upload):
            guard let header = PartLogCodec.encodeTusHeader(upload) else { throw PartJournalRefusal("the upload URL is too long to record") }
            return try begin(header: header)
        case .part(let number, let etag):
            return try appending.withLock { appending in
                guard let shared = appending.fd else { throw PartLogError("the log is not open") }
                guard let bytes = PartLogCodec.encodePart(number, etag: etag) else { throw PartJournalRefusal("the ETag is too long to record") }
                try folder.fs.writeAll(shared.fd, bytes, label: folder.label(name))
                return appending.syncDeferred ? SyncWork(fs: folder.fs, calls: []) : try syncingLog(shared, folder: false)
            }
        case .startOver:
            preconditionFailure("a start-over owes the old upload's end (giveUpUpload) and discards the log")
        }
    }

    /// `record` is durable: the crash points of the steps after it (`SPOOLD_CRASH_AT`, tests only).
    public func reachedDurable(_ record: PartRecord) {
        switch record {
        case .s3Upload: CrashPoint.multipartAfterBegin.reached()
        case .part: CrashPoint.multipartAfterPart.reached()
        case .tusUpload, .startOver: break
        }
    }

    /// The fsync of the log's descriptor (kept open for it), and of parts/ for a log just made,
    /// as work to hand over.
    private func syncingLog(_ shared: SharedDescriptor, folder syncsFolder: Bool, file: StaticString = #fileID, line: UInt = #line)
        throws -> SyncWork
    {
        let site = SourceLocation(file: file, line: line)
        var calls: [SyncWork.Call] = [.shared(shared, label: folder.label(name), site: site)]
        if syncsFolder { calls.append(.sync(try folder.descriptor(), label: folder.folderLabel, site: site, owned: false)) }
        return SyncWork(fs: folder.fs, calls: calls)
    }

    /// Ends the deferral: syncs what was written (the log and its name in parts/), and every
    /// later write returns its syncs. Called once the blob the records vouch for is durable (on
    /// the spool's background thread): the syncs are made outside the lock, so the engine's loop
    /// writing the next record never waits for them.
    public func makeDurable() throws {
        let written: SharedDescriptor? = appending.withLock { appending in
            guard appending.syncDeferred else { return nil }
            appending.syncDeferred = false
            return appending.fd
        }
        guard let written else { return }
        try folder.fs.sync(written.fd, label: folder.label(name))
        try folder.syncFolder()
    }

    /// The upload this log names is given up while the item goes on (a new upload replaces it):
    /// `owed`, its abort or termination, is written to `SPOOL/parts/aborts.log`, not synced;
    /// returns the syncs that make it durable. Only once they are made may the log go
    /// (`discard`). Throws `PartJournalRefusal` for an upload too long to record (nothing
    /// written), anything else when the spool failed.
    public func giveUpUpload(owing owed: OwedAbort) throws -> SyncWork {
        try folder.aborts.oweUnsynced([owed])
    }

    // MARK: tus

    /// A new log holding its first record (an S3 upload id or a tus upload URL), with the syncs
    /// that make it and its name in parts/ durable (none while they wait for the blob).
    private func begin(header: [UInt8]) throws -> SyncWork {
        try appending.withLock { appending in
            appending.fd = nil
            let shared = SharedDescriptor(try folder.create(name), fs: folder.fs)
            appending.fd = shared
            try folder.fs.writeAll(shared.fd, header, label: folder.label(name))
            return appending.syncDeferred ? SyncWork(fs: folder.fs, calls: []) : try syncingLog(shared, folder: true)
        }
    }

    /// Notes that the tus server acknowledged `offset` bytes: not synced (it only informs `ls`
    /// and the log line of a start-over); failures are ignored.
    public func recordOffset(_ offset: Int64) {
        appending.withLock { appending in
            guard let shared = appending.fd else { return }
            try? folder.fs.writeAll(shared.fd, PartLogCodec.encodeTusOffset(offset), label: folder.label(name))
        }
    }

    /// The tus upload reached `step`: its crash point (tests only).
    public func reached(_ step: TusStep) {
        switch step {
        case .created: CrashPoint.tusAfterCreate.reached()
        case .recorded: CrashPoint.tusAfterRecord.reached()
        case .patched: CrashPoint.tusAfterPatch.reached()
        }
    }

    // MARK: Both

    /// Removes the log (its upload is gone, finished, or owed to be ended); a missing log is fine.
    public func discard() {
        appending.withLock { $0.fd = nil }
        folder.remove(name)
    }

    /// The S3 upload reached `step`: its crash point (tests only).
    public func reached(_ step: MultipartStep) {
        switch step {
        case .created: CrashPoint.multipartAfterCreate.reached()
        case .completing: CrashPoint.multipartBeforeComplete.reached()
        case .completed: CrashPoint.multipartAfterComplete.reached()
        }
    }

    struct PartLogError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
