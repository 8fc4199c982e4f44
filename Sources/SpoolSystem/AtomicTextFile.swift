import Glibc

/// A file outside the spool that readers must only ever see whole (the metrics file): each
/// `replace` writes `PATH.tmp-<pid>` and renames it over PATH.
///
/// Not fsynced: it is rewritten every few seconds, and after a crash an old or missing copy
/// is harmless. The scratch name does not end in `.prom`, so node_exporter's textfile collector
/// never reads a half-written one.
public struct AtomicTextFile: Sendable {
    public let path: String
    private let scratchPath: String
    private let fs: PosixFileSystem

    public init(path: String, fs: PosixFileSystem = PosixFileSystem()) {
        self.path = path
        self.scratchPath = "\(path).tmp-\(getpid())"
        self.fs = fs
    }

    /// open(O_CREAT|O_TRUNC) the scratch file, write, close, rename(2) over `path`.
    public func replace(with text: String) throws {
        let cwd = FileDescriptor(rawValue: AT_FDCWD)
        let fd = try fs.open(scratchPath, relativeTo: nil, flags: [.writeOnly, .create, .truncate], mode: 0o644)
        do {
            try fs.closing(fd) { try fs.writeAll($0, Array(text.utf8), label: scratchPath) }
            try fs.rename(scratchPath, in: cwd, to: path, in: cwd)
        } catch {
            try? fs.remove(scratchPath, in: cwd, isDirectory: false)
            throw error
        }
    }
}
