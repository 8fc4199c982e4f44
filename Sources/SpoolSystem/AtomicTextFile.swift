import Glibc

/// A file outside the spool that readers must only ever see whole (the metrics file): each
/// `replace` writes a scratch file beside it and renames it over PATH.
///
/// The scratch file is made with `O_CREAT|O_EXCL|O_NOFOLLOW` under a name no one can guess
/// (`PATH.tmp-<pid>-<random>`): the folder may be writable by others (a textfile collector's),
/// and a file or symlink planted under a predictable name would otherwise be opened and
/// published, leaving its planter owning the metrics file. A name taken meanwhile is passed over
/// for another. Not fsynced: it is rewritten every few seconds, and after a crash an old or
/// missing copy is harmless. The scratch name does not end in `.prom`, so node_exporter's
/// textfile collector never reads a half-written one.
public struct AtomicTextFile: Sendable {
    public let path: String
    private let fs: PosixFileSystem
    /// Names tried before giving up on one `replace` (each taken one is another process's file).
    static let attempts = 8

    public init(path: String, fs: PosixFileSystem = PosixFileSystem()) {
        self.path = path
        self.fs = fs
    }

    /// A scratch name beside `path` (`PATH.tmp-<pid>-<16 hex digits>`).
    func scratchName() -> String {
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return "\(path).tmp-\(getpid())-\(String(repeating: "0", count: 16 - random.count))\(random)"
    }

    /// open(O_CREAT|O_EXCL|O_NOFOLLOW) a fresh scratch file, write, close, rename(2) over `path`.
    public func replace(with text: String) throws {
        let cwd = FileDescriptor(rawValue: AT_FDCWD)
        var attempt = 0
        while true {
            attempt += 1
            let scratch = scratchName()
            let fd: FileDescriptor
            do {
                fd = try fs.open(scratch, relativeTo: nil, flags: [.writeOnly, .create, .exclusive], mode: 0o644)
            } catch let error as SystemError where error.errno == .fileExists && attempt < AtomicTextFile.attempts {
                continue
            }
            do {
                try fs.closing(fd) { try fs.writeAll($0, Array(text.utf8), label: scratch) }
                try fs.rename(scratch, in: cwd, to: path, in: cwd)
            } catch {
                try? fs.remove(scratch, in: cwd, isDirectory: false)
                throw error
            }
            return
        }
    }
}
