import SpoolCore
import SpoolSystem
import Synchronization

/// One item's part log, `SPOOL/parts/<id>.log` (`PartLogCodec`): the durable progress of its S3
/// multipart upload.
///
/// Append-only, so a state change never needs a rename: `begin` creates the file (O_EXCL after
/// removing an old one), writes the upload record, fsyncs it and the folder; `record` appends one
/// part record and fsyncs before the part counts. A torn tail from a crash is truncated away
/// before the next append. Called from the transport's threads: one lock per log.
public final class PartLog: PartJournal, @unchecked Sendable {
    public let id: ItemID
    private let folder: PartLogFolder
    /// The open log while an upload appends to it.
    private let appending = Mutex<FileDescriptor?>(nil)

    init(id: ItemID, folder: PartLogFolder) {
        (self.id, self.folder) = (id, folder)
    }

    deinit { closeAppending() }

    var name: String { "\(id).log" }

    public func load() -> PartLogCodec.State? {
        appending.withLock { fd in
            guard let scan = folder.scan(name) else { return nil }
            guard scan.state != nil else {
                // Cut while its first record was written: the upload id never counted. Anything
                // else is not a log of ours (or a damaged one): kept aside, never trusted.
                if scan.isTornStart { folder.remove(name) } else { folder.setAside(name) }
                return nil
            }
            do {
                let opened = try fd ?? folder.openForAppend(name)
                fd = opened
                if try folder.fs.seekToEnd(opened) != Int64(scan.validLength) {
                    try folder.fs.truncate(opened, to: Int64(scan.validLength))
                    _ = try folder.fs.seekToEnd(opened)
                }
            } catch {
                return nil
            }
            return scan.state
        }
    }

    public func begin(_ state: PartLogCodec.State) throws {
        try appending.withLock { fd in
            if let old = fd { folder.fs.close(old) }
            fd = nil
            guard let header = PartLogCodec.encodeHeader(state) else { throw PartJournalRefusal("the upload id or URL is too long to record") }
            let opened = try folder.create(name)
            fd = opened
            try folder.fs.writeAll(opened, header, label: folder.label(name))
            try folder.fs.sync(opened, label: folder.label(name))
            try folder.syncFolder()
        }
        CrashPoint.multipartAfterBegin.reached()
    }

    public func record(part number: Int, etag: String) throws {
        try appending.withLock { fd in
            guard let opened = fd else { throw PartLogError("the log is not open") }
            guard let bytes = PartLogCodec.encodePart(number, etag: etag) else { throw PartJournalRefusal("the ETag is too long to record") }
            try folder.fs.writeAll(opened, bytes, label: folder.label(name))
            try folder.fs.sync(opened, label: folder.label(name))
        }
        CrashPoint.multipartAfterPart.reached()
    }

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
        appending.withLock { fd in
            if let old = fd { folder.fs.close(old) }
            fd = nil
        }
    }

    struct PartLogError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
