import SpoolStore
import SpoolSystem

/// A file under incoming/ the engine is judging: its path below incoming/ and, during a scan, the
/// open folder holding it (so a walk does not re-open the path for every file).
struct IncomingFile {
    /// `2026-11-23/cam7/fox.jpg`, or `fox.jpg` directly in incoming/.
    var path: String
    /// The folder holding it, when the caller has it open; nil: opened through `Spool`.
    var folder: FileDescriptor?
    /// The last component of `path`.
    var name: String

    init(path: String, folder: FileDescriptor? = nil, name: String? = nil) {
        self.path = path
        self.folder = folder
        self.name = name ?? String(path.split(separator: "/").last ?? Substring(path))
    }

    func status(_ spool: Spool) throws -> FileStatus {
        if let folder { return try spool.incomingStatus(name, in: folder) }
        return try spool.incomingStatus(path)
    }

    func writerCheck(_ spool: Spool) throws -> WriterCheck {
        if let folder { return try spool.incomingWriterCheck(name, in: folder) }
        return try spool.incomingWriterCheck(path)
    }
}
