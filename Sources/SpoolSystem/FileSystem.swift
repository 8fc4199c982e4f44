import Glibc

/// Every file-system call spoold makes goes through this protocol: the one choke point.
///
/// `PosixFileSystem` is the real thing; tests wrap it to record the order of calls (fsync before
/// rename, directory fsync after) and to force an errno on the Nth call. Paths are always single
/// names relative to an open directory descriptor (`openat(2)` family), so a hostile name can
/// never walk out of the spool.
public protocol FileSystem: Sendable {
    /// `openat(2)`. `relativeTo == nil` means the current directory (only for the spool root).
    func open(_ name: String, relativeTo directory: FileDescriptor?, flags: OpenFlags, mode: UInt32) throws
        -> FileDescriptor
    /// `close(2)`; errors are ignored (Linux always releases the descriptor).
    func close(_ fd: FileDescriptor)
    /// `read(2)`, EINTR retried; 0 at end of file.
    func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// `write(2)`, EINTR retried; may write less than asked.
    func write(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws -> Int
    /// `fsync(2)` of a file or directory. A failure is final: never retry-and-trust (fsyncgate).
    /// `site` is where spoold asked for it (see `SourceLocation`); callers leave it out.
    func sync(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws
    /// `syncfs(2)` of the file system holding `fd`: one call that makes every earlier write,
    /// create and rename on it durable (group commit for large batches). Reports writeback errors
    /// since Linux 5.8; like `sync`, a failure is final.
    func syncFileSystem(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws
    /// `renameat(2)` within one file system; EXDEV is an error, never a copy.
    func rename(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor)
        throws
    /// `unlinkat(2)`.
    func remove(_ name: String, in directory: FileDescriptor, isDirectory: Bool) throws
    /// `rename(2)` that never replaces: fails with EEXIST when `to` exists (`RENAME_NOREPLACE`).
    func renameNoReplace(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor) throws
    /// `fsetxattr(2)`: sets an extended attribute of an open file (`user.` names need write
    /// permission; ENOTSUP where the file system has none).
    func setAttribute(_ name: String, _ value: [UInt8], of fd: FileDescriptor) throws
    /// `fgetxattr(2)`: an extended attribute of an open file, nil when it has none; at most `limit` bytes.
    func attribute(_ name: String, of fd: FileDescriptor, limit: Int) throws -> [UInt8]?
    /// `mkdirat(2)`; EEXIST is reported as an error for the caller to judge.
    func makeDirectory(_ name: String, in directory: FileDescriptor?, mode: UInt32) throws
    /// `fstat(2)`.
    func status(of fd: FileDescriptor) throws -> FileStatus
    /// `fstatat(2)` with AT_SYMLINK_NOFOLLOW.
    func status(of name: String, in directory: FileDescriptor) throws -> FileStatus
    /// All names in a directory except `.` and `..`.
    func list(_ directory: FileDescriptor) throws -> [DirectoryEntry]
    /// Every name in a directory except `.` and `..`, one at a time and without a copy: `body`
    /// gets the name's bytes (valid only during the call) and the type `readdir` reported, and
    /// returns false to stop. A listing of a million names then costs no memory per name.
    func forEachEntry(_ directory: FileDescriptor, _ body: (UnsafeRawBufferPointer, FileStatus.FileType) throws -> Bool) throws
    /// Whether a listing of `directory` goes in the order of its names' hashes, its positions
    /// (`d_off`, `seekdir`) being those hashes: a folder of ext4's with its index flag. Then
    /// `forEachEntry(_:from:_:)` may start anywhere in the hash space, and `forEachEntryInParts`
    /// lists a large one on several threads at once (`SplitListing`).
    func listsInHashOrder(_ directory: FileDescriptor) -> Bool
    /// A listing of its own from `position` on (`seekdir`), each entry with the position after it
    /// (`d_off`), "." and ".." included; `body` returns false to stop.
    func forEachEntry(
        _ directory: FileDescriptor, from position: Int64,
        _ body: (UnsafeRawBufferPointer, FileStatus.FileType, _ next: Int64) throws -> Bool
    ) throws
    /// `futimens(2)`: sets atime and mtime (a pending json's mtime is its next-attempt time).
    func setModificationTime(_ fd: FileDescriptor, milliseconds: Int64) throws
    /// `flock(2)`; returns false when non-blocking and held elsewhere.
    func lock(_ fd: FileDescriptor, exclusive: Bool, wait: Bool) throws -> Bool
    /// `flock(fd, LOCK_UN)`.
    func unlock(_ fd: FileDescriptor) throws
    /// `ftruncate(2)`.
    func truncate(_ fd: FileDescriptor, to length: Int64) throws
    /// `lseek(2)` to the end; returns the new offset.
    func seekToEnd(_ fd: FileDescriptor) throws -> Int64
    /// `lseek(2)` to `offset` from the start (a run handed on by a recycle is read on from there).
    func seek(_ fd: FileDescriptor, to offset: Int64) throws
    /// Whether a process holds `name` open for writing: opens it read-only (no links followed,
    /// never blocking), takes a read lease (`fcntl(F_SETLEASE, F_RDLCK)`) and gives it back at
    /// once. Throws what `open` throws (ENOENT for a file that vanished).
    func writerCheck(_ name: String, in directory: FileDescriptor) throws -> WriterCheck

    /// `posix_fallocate(3)`: makes sure the file's first `length` bytes have blocks on disk, so
    /// later writes there cannot fail for lack of space (glibc writes zeros where the file system
    /// cannot preallocate).
    func allocate(_ fd: FileDescriptor, length: Int64) throws
}

/// Where in spoold's source a durability call (`sync`, `syncFileSystem`) was asked for: `#fileID`
/// and `#line` of the call, or, through a helper that syncs for several callers (a group of
/// folders, the index), of the helper's caller. The real file system ignores it; a test's file
/// system tells one durability call from another by it (the power-cut explorer drops one at a
/// time and shows that a crash state then breaks a promise).
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    public let file: StaticString
    public let line: UInt

    public init(file: StaticString = #fileID, line: UInt = #line) {
        self.file = file
        self.line = line
    }

    public var description: String { "\(file):\(line)" }
    public static func == (a: SourceLocation, b: SourceLocation) -> Bool { a.description == b.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

/// Flags for `FileSystem.open`, spelled out so call sites read as the rules they follow.
public struct OpenFlags: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let readOnly = OpenFlags([])
    public static let writeOnly = OpenFlags(rawValue: 1 << 0)
    public static let readWrite = OpenFlags(rawValue: 1 << 1)
    public static let create = OpenFlags(rawValue: 1 << 2)
    public static let exclusive = OpenFlags(rawValue: 1 << 3)
    public static let append = OpenFlags(rawValue: 1 << 4)
    public static let directory = OpenFlags(rawValue: 1 << 5)
    /// Never follow a symlink in the last component: nothing in the spool may lead spoold outside it. Always added by `PosixFileSystem`
    /// except for the spool root itself.
    public static let followSymlinks = OpenFlags(rawValue: 1 << 6)
    public static let truncate = OpenFlags(rawValue: 1 << 7)
    /// O_NONBLOCK: opening a FIFO must not hang the daemon.
    public static let nonBlocking = OpenFlags(rawValue: 1 << 8)
    /// O_NOATIME: reads do not update the file's access time. Reading a file written a moment
    /// ago would (relatime), and an access time is a metadata change that waits for the file
    /// system's journal: behind another program's large fsync, for seconds, with an upload's
    /// body read (and with libcurl every transfer on its thread) stuck behind it. Only the file's
    /// owner (or CAP_FOWNER) may ask; `PosixFileSystem` opens without it otherwise.
    public static let noAccessTime = OpenFlags(rawValue: 1 << 9)
}

extension FileSystem {
    /// `sync(_:label:at:)` at the caller's line.
    public func sync(_ fd: FileDescriptor, label: String, file: StaticString = #fileID, line: UInt = #line) throws {
        try sync(fd, label: label, at: SourceLocation(file: file, line: line))
    }

    /// `syncFileSystem(_:label:at:)` at the caller's line.
    public func syncFileSystem(_ fd: FileDescriptor, label: String, file: StaticString = #fileID, line: UInt = #line) throws {
        try syncFileSystem(fd, label: label, at: SourceLocation(file: file, line: line))
    }

    /// Not in hash order (a file system of tests): listed whole.
    public func listsInHashOrder(_ directory: FileDescriptor) -> Bool { false }

    /// Only for folders listed in hash order (`listsInHashOrder`), which a test's file system has none of.
    public func forEachEntry(
        _ directory: FileDescriptor, from position: Int64,
        _ body: (UnsafeRawBufferPointer, FileStatus.FileType, _ next: Int64) throws -> Bool
    ) throws {
        throw SystemError(.readdir, path: "fd \(directory.rawValue)", errno: Errno(rawValue: ENOTSUP))
    }

    /// `list`, name by name (for file systems of tests that only list).
    public func forEachEntry(
        _ directory: FileDescriptor, _ body: (UnsafeRawBufferPointer, FileStatus.FileType) throws -> Bool
    ) throws {
        for entry in try list(directory) {
            let goOn = try FileName.encode(entry.name).withUnsafeBytes { try body($0, entry.type) }
            if !goOn { return }
        }
    }

    /// Writes the whole buffer, looping over short writes.
    public func writeAll(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer, label: String) throws {
        try WriteLoop.writeAll(bytes, label: label) { try write(fd, from: $0) }
    }

    public func writeAll(_ fd: FileDescriptor, _ bytes: [UInt8], label: String) throws {
        try bytes.withUnsafeBytes { (buffer) throws in try writeAll(fd, buffer, label: label) }
    }

    /// Reads at most `limit` bytes; returns nil when the file holds more (a size cap before parsing).
    /// `sizeHint` (the size an fstat saw) sizes the first read: a json of a few hundred bytes
    /// then costs no zero-filled 64 KiB buffer. Reading goes on to end of file whatever the hint.
    public func readAll(_ fd: FileDescriptor, limit: Int, sizeHint: Int64? = nil) throws -> [UInt8]? {
        let chunkSize = 64 * 1024
        var size = sizeHint.map { Int(min(max($0, 0), Int64(chunkSize - 1))) + 1 } ?? chunkSize
        var result: [UInt8] = []
        while true {
            var n = 0
            let chunk = try [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                n = try read(fd, into: UnsafeMutableRawBufferPointer(buffer))
                count = n
            }
            if n == 0 { return result }
            if result.count + n > limit { return nil }
            if result.isEmpty { result = chunk } else { result.append(contentsOf: chunk) }
            size = chunkSize
        }
    }

    /// Runs `body` with `fd` and closes it afterwards, whatever happens.
    public func closing<T>(_ fd: FileDescriptor, _ body: (FileDescriptor) throws -> T) throws -> T {
        defer { close(fd) }
        return try body(fd)
    }
}
