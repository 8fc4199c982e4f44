import Glibc
import SpoolCore
import SpoolSystem
import Synchronization

/// `SPOOL/parts/`: the part logs of S3 multipart and tus uploads in progress (`PartLog`), one per item.
///
/// Lives no longer than its `Spool` (it works relative to the spool's root descriptor). Made when the first upload begins, so a spool that never sends a multipart upload has none.
/// Not a state folder: a log is progress of an item that lives in pending/, inflight/ or failed/,
/// and start-up recovery removes a log whose item is gone (`removeLogs(keeping:)`). Shared by
/// the engine, the transport's threads (which read a log as an attempt begins) and the thread
/// that makes the spool's syncs, so its descriptor is opened under a lock.
public final class PartLogFolder: @unchecked Sendable {
    public static let folderName = "parts"
    /// A log holds one record per part (at most 10,000) of a few hundred bytes at most.
    static let maximumLogSize = 16 << 20

    let fs: any FileSystem
    private let root: FileDescriptor
    private let spoolPath: String
    private let opened = Mutex<FileDescriptor?>(nil)

    /// `aborts.log`: the AbortMultipartUpload requests still owed.
    public var aborts: AbortLog { AbortLog(folder: self) }
    /// Appends to `aborts.log` from this process, one at a time.
    let abortsAppending = Mutex(())

    init(root: FileDescriptor, fs: any FileSystem, spoolPath: String) {
        (self.root, self.fs, self.spoolPath) = (root, fs, spoolPath)
    }

    deinit { if let fd = opened.withLock({ $0 }) { fs.close(fd) } }

    /// The log of `id` (which may not exist yet); with `syncDeferred`, its writes are not synced
    /// until `PartLog.makeDurable` (a direct upload's, whose blob is not durable yet).
    public func log(for id: ItemID, syncDeferred: Bool = false) -> PartLog { PartLog(id: id, folder: self, syncDeferred: syncDeferred) }

    /// What `id`'s log records, for `ls` and `show`; nil when there is none or it does not parse.
    public func state(of id: ItemID) -> PartLogCodec.State? { scan("\(id).log")?.state }

    /// The tus upload `id`'s log records and the last offset it noted, for `ls` and `show`.
    public func tusState(of id: ItemID) -> (record: TusUploadRecord, offset: Int64)? {
        guard let scan = scan("\(id).log"), let record = scan.tus else { return nil }
        return (record, scan.tusOffset)
    }

    /// What ending the upload a log names costs: its abort or termination, owed from `now`.
    static func owed(by scan: PartLogCodec.Scan, of id: ItemID, now: Timestamp) -> OwedAbort? {
        if let state = scan.state {
            return OwedAbort(id: id, region: state.region, uploadID: state.uploadID, url: state.url, since: now)
        }
        if let tus = scan.tus {
            return OwedAbort(tusTerminationOf: id, uploadURL: tus.uploadURL, endpoint: tus.endpoint, since: now)
        }
        return nil
    }

    /// The items that have a log, from one listing of the folder (for `ls`).
    public func loggedItems() -> Set<ItemID> {
        guard let folder = try? folder(create: false), let entries = try? fs.list(folder) else { return [] }
        return Set(entries.compactMap { $0.name.hasSuffix(".log") ? ItemID(String($0.name.dropLast(4))) : nil })
    }

    /// Removes `id`'s log (the item was purged, failed or uploaded); a missing one is fine.
    public func remove(_ id: ItemID) { remove("\(id).log") }

    /// `id`'s upload is given up (`purge`): its abort (S3) or termination (tus) is recorded as
    /// owed (durable), then its log is removed. Returns what is owed; nil when the item has no
    /// log that names an upload (a damaged one is set aside, as when an upload resumes). Throws
    /// when it cannot be recorded; the log is then kept.
    public func giveUp(_ id: ItemID, now: Timestamp) throws -> OwedAbort? {
        guard let (owed, durable) = try oweEnd(of: id, now: now) else { return nil }
        try durable.perform()
        remove(id)
        return owed
    }

    /// `giveUp` without its sync, for the daemon, whose loop never waits on the disk: `id`'s
    /// upload's end is written to `aborts.log` as owed, not synced. Returns it with the syncs that
    /// make it durable, which the engine hands to the thread that makes the spool's syncs; only
    /// once they are made may what relies on the debt happen: the item's move to failed/, and the
    /// log's removal (`remove`). Nil and throws as `giveUp`.
    public func oweEnd(of id: ItemID, now: Timestamp) throws -> (owed: OwedAbort, durable: SyncWork)? {
        let name = "\(id).log"
        guard let scan = scan(name) else { return nil }
        guard let owed = PartLogFolder.owed(by: scan, of: id, now: now) else {
            if scan.isTornStart { remove(name) } else { setAside(name) }
            return nil
        }
        return (owed, try aborts.oweUnsynced([owed]))
    }

    /// Start-up recovery: removes every log whose item is not among `live`, and sets aside
    /// anything in the folder that is not a log file. Returns how many were removed.
    @discardableResult
    public func removeLogs(keeping live: Set<ItemID>) -> Int {
        guard let folder = try? folder(create: false), let entries = try? fs.list(folder) else { return 0 }
        var removed = 0
        for entry in entries where entry.name != "." && entry.name != ".." && entry.name != AbortLog.fileName {
            guard entry.name.hasSuffix(".log"), let id = ItemID(String(entry.name.dropLast(4))) else {
                setAside(entry.name)
                continue
            }
            if !live.contains(id) {
                remove(entry.name)
                removed += 1
            }
        }
        return removed
    }

    func label(_ name: String) -> String { "\(spoolPath)/\(PartLogFolder.folderName)/\(name)" }

    var folderLabel: String { "\(spoolPath)/\(PartLogFolder.folderName)" }

    /// The folder's descriptor (made if missing), kept open while the spool is.
    func descriptor() throws -> FileDescriptor { try folder(create: true) }

    private func folder(create: Bool) throws -> FileDescriptor {
        try opened.withLock { fd in
            if let fd { return fd }
            if create {
                do { try fs.makeDirectory(PartLogFolder.folderName, in: root, mode: 0o700) } catch let e as SystemError where e.errno == .fileExists {}
            }
            let new = try fs.open(PartLogFolder.folderName, relativeTo: root, flags: [.directory], mode: 0)
            if create { try fs.sync(root, label: spoolPath) }
            fd = new
            return new
        }
    }

    func scan(_ name: String) -> PartLogCodec.Scan? {
        guard let folder = try? folder(create: false),
              let fd = try? fs.open(name, relativeTo: folder, flags: [.readOnly, .nonBlocking], mode: 0)
        else { return nil }
        fs.close(fd)
        guard let bytes = read(name) else { return PartLogCodec.Scan(state: nil, validLength: 0) }
        return PartLogCodec.decode(bytes)
    }

    /// The bytes of `name` (a regular file, at most `maximumLogSize`), or nil: missing, not a
    /// regular file, too large or unreadable.
    func read(_ name: String) -> [UInt8]? {
        guard let folder = try? folder(create: false),
              let fd = try? fs.open(name, relativeTo: folder, flags: [.readOnly, .nonBlocking], mode: 0)
        else { return nil }
        let bytes: [UInt8]?? = try? fs.closing(fd) { fd in
            guard try fs.status(of: fd).type == .regular else { return nil }
            return try fs.readAll(fd, limit: PartLogFolder.maximumLogSize)
        }
        return bytes ?? nil
    }

    /// Opens `name` to append, creating it (mode 0600) if missing; says whether it did.
    func openForAppendCreating(_ name: String) throws -> (FileDescriptor, created: Bool) {
        let folder = try folder(create: true)
        do {
            return (try fs.open(name, relativeTo: folder, flags: [.writeOnly, .append, .create, .exclusive], mode: 0o600), true)
        } catch let error as SystemError where error.errno == .fileExists {
            return (try fs.open(name, relativeTo: folder, flags: [.writeOnly, .append, .nonBlocking], mode: 0), false)
        }
    }

    /// Renames `name` from `directory` (tmp/) into the folder, replacing what is there.
    func renameIn(_ name: String, from directory: FileDescriptor) throws {
        try fs.rename(name, in: directory, to: name, in: folder(create: true))
    }

    func openForAppend(_ name: String) throws -> FileDescriptor {
        try fs.open(name, relativeTo: folder(create: false), flags: [.writeOnly, .append, .nonBlocking], mode: 0)
    }

    func create(_ name: String) throws -> FileDescriptor {
        let folder = try folder(create: true)
        remove(name)
        return try fs.open(name, relativeTo: folder, flags: [.writeOnly, .append, .create, .exclusive], mode: 0o600)
    }

    func syncFolder(file: StaticString = #fileID, line: UInt = #line) throws {
        try fs.sync(folder(create: true), label: folderLabel, at: SourceLocation(file: file, line: line))
    }

    func remove(_ name: String) {
        guard let folder = try? folder(create: false) else { return }
        try? fs.remove(name, in: folder, isDirectory: false)
    }

    /// Moves an entry that is not a usable log into `SPOOL/corrupt/` (kept, never deleted).
    func setAside(_ name: String) {
        guard let folder = try? folder(create: false) else { return }
        let corruptName = SpoolFolder.corruptFolderName
        try? fs.makeDirectory(corruptName, in: root, mode: 0o700)
        guard let corrupt = try? fs.open(corruptName, relativeTo: root, flags: [.directory], mode: 0) else { return }
        defer { fs.close(corrupt) }
        let aside = "\(PartLogFolder.folderName).\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? fs.rename(name, in: folder, to: aside, in: corrupt)
    }
}
