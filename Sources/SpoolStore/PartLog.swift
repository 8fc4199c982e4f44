import Glibc
import SpoolCore
import SpoolSystem
import Synchronization

/// One item's part log, `SPOOL/parts/<id>.log` (`PartLogCodec`): the durable progress of its S3
/// multipart upload (`PartJournal`), or of its tus upload (`TusJournal`: the upload URL, then
/// the offsets the server acknowledged, appended unsynced).
///
/// A log of the other kind (the operator changed `--url` between an s3:// and a tus+ URL while
/// an upload was under way) is given up as it is loaded: its abort or termination is recorded as
/// owed, then it goes, and the upload starts afresh.
///
/// Append-only, so a state change never needs a rename: `begin` creates the file (O_EXCL after
/// removing an old one), writes the upload record, fsyncs it and the folder; `record` appends one
/// part record and fsyncs before the part counts. A torn tail from a crash is truncated away
/// before the next append. Called from the transport's threads: one lock per log.
///
/// One writer at a time, and every write through this type: while an attempt of the item runs,
/// only its driver writes the log (`S3MultipartAttempt`, `TusUploadAttempt`, on their
/// transport's queue, performing the machine's `recordUploadID`/`recordPart` or tus record
/// actions), and the spool's background thread only syncs what it wrote (`makeDurable`). The
/// engine touches the log only when no attempt of the item runs: to give the upload up once the
/// item went to failed/, to remove it once the item's success is recorded, and at start-up.
///
/// The log of a direct upload (`Spool+Direct`) starts with its syncs deferred: its blob is not
/// durable yet, and a record must never be durable before the bytes it vouches for. Its writes
/// survive a kill -9 (the page cache does); `makeDurable`, called once the blob is synced,
/// syncs what was written and every write after it.
public final class PartLog: PartJournal, TusJournal, @unchecked Sendable {
    public let id: ItemID
    private let folder: PartLogFolder
    /// The open log while an upload appends to it, and whether its writes wait for the blob.
    private let appending: Mutex<Appending>

    private struct Appending {
        var fd: FileDescriptor?
        var syncDeferred: Bool
    }

    init(id: ItemID, folder: PartLogFolder, syncDeferred: Bool = false) {
        (self.id, self.folder) = (id, folder)
        appending = Mutex(Appending(fd: nil, syncDeferred: syncDeferred))
    }

    deinit { closeAppending() }

    var name: String { "\(id).log" }

    public func load() -> PartLogCodec.State? {
        appending.withLock { state in
            guard let scan = folder.scan(name) else { return nil }
            if scan.tus != nil {
                giveUpOtherKind(scan)
                return nil
            }
            guard scan.state != nil else {
                // Cut while its first record was written: the upload id never counted. Anything
                // else is not a log of ours (or a damaged one): kept aside, never trusted.
                if scan.isTornStart { folder.remove(name) } else { folder.setAside(name) }
                return nil
            }
            guard reopen(&state, at: scan.validLength) else { return nil }
            return scan.state
        }
    }

    /// Opens the log for appending (once) at the end of its valid records, a torn tail cut away;
    /// false when it cannot be (the upload then starts afresh).
    private func reopen(_ state: inout Appending, at validLength: Int) -> Bool {
        do {
            let opened = try state.fd ?? folder.openForAppend(name)
            state.fd = opened
            if try folder.fs.seekToEnd(opened) != Int64(validLength) {
                try folder.fs.truncate(opened, to: Int64(validLength))
                _ = try folder.fs.seekToEnd(opened)
            }
            return true
        } catch {
            return false
        }
    }

    /// A log of the kind this upload does not use: its upload's end owed (best effort: a log that
    /// cannot be recorded for it is removed anyway, as a start-over would), then the log removed.
    private func giveUpOtherKind(_ scan: PartLogCodec.Scan) {
        let now = Timestamp(millisecondsSinceEpoch: Int64(Glibc.time(nil)) * 1000)
        if let owed = PartLogFolder.owed(by: scan, of: id, now: now) { try? folder.aborts.owe([owed]) }
        folder.remove(name)
    }

    public func begin(_ state: PartLogCodec.State) throws {
        guard let header = PartLogCodec.encodeHeader(state) else { throw PartJournalRefusal("the upload id or URL is too long to record") }
        try begin(header: header)
        CrashPoint.multipartAfterBegin.reached()
    }

    public func record(part number: Int, etag: String) throws {
        try appending.withLock { appending in
            guard let opened = appending.fd else { throw PartLogError("the log is not open") }
            guard let bytes = PartLogCodec.encodePart(number, etag: etag) else { throw PartJournalRefusal("the ETag is too long to record") }
            try folder.fs.writeAll(opened, bytes, label: folder.label(name))
            if !appending.syncDeferred { try folder.fs.sync(opened, label: folder.label(name)) }
        }
        CrashPoint.multipartAfterPart.reached()
    }

    /// Ends the deferral: syncs what was written (the log and its name in parts/), and every
    /// later write syncs as it goes. Called once the blob the records vouch for is durable.
    public func makeDurable() throws {
        try appending.withLock { appending in
            guard appending.syncDeferred else { return }
            if let opened = appending.fd {
                try folder.fs.sync(opened, label: folder.label(name))
                try folder.syncFolder()
            }
            appending.syncDeferred = false
        }
    }

    public func oweAbort(_ state: PartLogCodec.State, since: Timestamp) throws -> OwedAbort {
        let owed = OwedAbort(id: id, region: state.region, uploadID: state.uploadID, url: state.url, since: since)
        try folder.aborts.owe([owed])
        return owed
    }

    // MARK: TusJournal

    public func loadTus() -> (record: TusUploadRecord, offset: Int64)? {
        appending.withLock { state in
            guard let scan = folder.scan(name) else { return nil }
            if scan.state != nil {
                giveUpOtherKind(scan)
                return nil
            }
            guard let record = scan.tus else {
                if scan.isTornStart { folder.remove(name) } else { folder.setAside(name) }
                return nil
            }
            guard reopen(&state, at: scan.validLength) else { return nil }
            return (record, scan.tusOffset)
        }
    }

    public func begin(_ record: TusUploadRecord) throws {
        guard let header = PartLogCodec.encodeTusHeader(record) else { throw PartJournalRefusal("the upload URL is too long to record") }
        try begin(header: header)
    }

    /// A new log holding its first record (an S3 upload id or a tus upload URL), made durable
    /// with its folder unless its syncs wait for the blob.
    private func begin(header: [UInt8]) throws {
        try appending.withLock { appending in
            if let old = appending.fd { folder.fs.close(old) }
            appending.fd = nil
            let opened = try folder.create(name)
            appending.fd = opened
            try folder.fs.writeAll(opened, header, label: folder.label(name))
            guard !appending.syncDeferred else { return }
            try folder.fs.sync(opened, label: folder.label(name))
            try folder.syncFolder()
        }
    }

    public func recordOffset(_ offset: Int64) {
        appending.withLock { appending in
            guard let opened = appending.fd else { return }
            try? folder.fs.writeAll(opened, PartLogCodec.encodeTusOffset(offset), label: folder.label(name))
        }
    }

    public func oweTermination(_ record: TusUploadRecord, since: Timestamp) throws -> OwedAbort {
        let owed = OwedAbort(tusTerminationOf: id, uploadURL: record.uploadURL, endpoint: record.endpoint, since: since)
        try folder.aborts.owe([owed])
        return owed
    }

    public func reached(_ step: TusStep) {
        switch step {
        case .created: CrashPoint.tusAfterCreate.reached()
        case .recorded: CrashPoint.tusAfterRecord.reached()
        case .patched: CrashPoint.tusAfterPatch.reached()
        }
    }

    // MARK: Both

    public func discard() {
        closeAppending()
        folder.remove(name)
    }

    public func reached(_ step: MultipartStep) {
        switch step {
        case .created: CrashPoint.multipartAfterCreate.reached()
        case .completing: CrashPoint.multipartBeforeComplete.reached()
        case .completed: CrashPoint.multipartAfterComplete.reached()
        }
    }

    private func closeAppending() {
        appending.withLock { appending in
            if let old = appending.fd { folder.fs.close(old) }
            appending.fd = nil
        }
    }

    struct PartLogError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
