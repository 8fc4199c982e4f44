import Glibc
import SpoolCore
import SpoolSystem

/// Direct uploads: a file from incoming/ sent while the endpoint answers and nothing is queued,
/// without first being made a durable item (no json, no index record, no sync).
///
/// The file is renamed to `inflight/<id>.a1.blob`, its path below incoming/ kept in an extended
/// attribute of the file itself. A success removes it; any other outcome makes it an ordinary
/// item (json written, everything synced: `SpoolTransition.fromDirectUpload`). A process that
/// dies meanwhile leaves a lone blob in inflight/, which start-up recovery turns into an item
/// with its original name and an interrupted attempt, like any upload it interrupts. Nothing is
/// synced before the request: a file its producer did not fsync can be lost to a power cut in
/// the seconds before its upload, as it could in incoming/ (the Maildir rule: the writer syncs).
extension Spool {
    /// The extended attribute holding a directly sent blob's path below incoming/ (its bytes).
    static let directNameAttribute = "user.spoold.name"

    /// What `takeForDirectUpload` did.
    public enum DirectTake: Sendable {
        /// Renamed to `inflight/<id>.a1.blob`: the descriptor reads it (the upload's body).
        case taken(FileDescriptor, size: Int64)
        /// Not for a direct upload (why, for the debug log); the ordinary intake takes it.
        case declined(String)
        /// The spool's file system keeps no extended attributes: no direct uploads here.
        case unsupported(String)
    }

    /// Takes `incoming/<path>` for a direct upload as item `id`, attempt 1: a regular file with
    /// one link on the spool's file system that takes the name attribute; anything else is
    /// declined and left where it was.
    public func takeForDirectUpload(_ path: String, as id: ItemID) -> DirectTake {
        do {
            return try withIncomingFolder(of: path) { folder, leaf in
                // The body: read without access times (see `OpenFlags.noAccessTime`).
                let fd = try fs.open(leaf, relativeTo: folder, flags: [.readOnly, .nonBlocking, .noAccessTime], mode: 0)
                var taken = false
                defer { if !taken { fs.close(fd) } }
                let status = try fs.status(of: fd)
                guard status.type == .regular, status.linkCount == 1, status.device == device else {
                    return .declined("not a regular file with one link on the spool's file system")
                }
                do {
                    try fs.setAttribute(Spool.directNameAttribute, FileName.encode(path), of: fd)
                } catch let error as SystemError where error.errno == .notSupported {
                    return .unsupported("\(error)")
                }
                let blob = ItemFileName(id: id, attempt: 1, kind: .blob).description
                try fs.rename(leaf, in: folder, to: blob, in: descriptor(.inflight))
                // The name may have been given to another file between the open and the rename:
                // that one is its producer's, and goes back.
                guard let moved = try? fs.status(of: blob, in: descriptor(.inflight)), moved.inode == status.inode else {
                    giveBack(blob, to: leaf, in: folder)
                    return .declined("replaced by another file while it was taken")
                }
                taken = true
                CrashPoint.directAfterTake.reached()
                return .taken(fd, size: status.size)
            }
        } catch {
            return .declined("\(error)")
        }
    }

    /// Puts a file taken by mistake back under its name in incoming/, never over another file:
    /// under `<name>.<id>` if the name is taken again. Failing both, it stays a lone blob in
    /// inflight/, which the next start-up recovery makes an item.
    private func giveBack(_ blob: String, to leaf: String, in folder: FileDescriptor) {
        let inflight = descriptor(.inflight)
        if (try? fs.renameNoReplace(blob, in: inflight, to: leaf, in: folder)) != nil { return }
        let sibling = "\(leaf).\(blob.prefix { $0 != "." })"
        _ = try? fs.renameNoReplace(blob, in: inflight, to: sibling, in: folder)
    }

    /// The path below incoming/ of a blob that was sent directly (its name attribute), or nil.
    public func directSourceName(of name: ItemFileName, at location: ItemLocation) -> [UInt8]? {
        guard let fd = try? fs.open(name.description, relativeTo: descriptor(SpoolFolder(location.state)), flags: [.readOnly, .nonBlocking], mode: 0)
        else { return nil }
        defer { fs.close(fd) }
        guard let bytes = try? fs.attribute(Spool.directNameAttribute, of: fd, limit: 4096), !bytes.isEmpty else { return nil }
        return bytes
    }

    /// Makes a direct upload durable that is taking a while (a multipart upload, on the spool's
    /// background thread): the blob's bytes, its name in inflight/ with its name attribute, and
    /// then `partLog`, whose records were written but not synced until now (they must never be
    /// durable before the bytes they vouch for). Nothing to do once the blob is gone (uploaded).
    /// A failed sync is a spool failure, reported like a failed removal: the daemon stops.
    public func makeDirectUploadDurable(_ id: ItemID, partLog: PartLog) {
        let inflight = descriptor(.inflight)
        let blob = ItemFileName(id: id, attempt: 1, kind: .blob).description
        let label = "\(path)/\(SpoolFolder.inflight.rawValue)"
        reaper.perform { fs in
            guard let fd = try? fs.open(blob, relativeTo: inflight, flags: [.readOnly, .nonBlocking], mode: 0) else { return }
            try fs.closing(fd) { try fs.sync($0, label: "\(label)/\(blob)") }
            try fs.sync(inflight, label: label)
            try partLog.makeDurable()
        }
    }

    /// Removes the blobs of direct uploads that succeeded, then fsyncs inflight/ (on the spool's
    /// background thread, once for the removals queued meanwhile). Nothing was recorded for them:
    /// the removal is what records their success, and until it is durable a power cut may bring
    /// a blob back (the take out of incoming/ with it), to be sent again as a recovered item.
    public func removeDirectBlobs(_ ids: [ItemID]) {
        let inflight = descriptor(.inflight)
        reaper.remove(
            ids.map { .init(folder: inflight, json: nil, blob: ItemFileName(id: $0, attempt: 1, kind: .blob).description) },
            thenSyncing: (inflight, "\(path)/\(SpoolFolder.inflight.rawValue)"))
    }
}
