import CSpoolShims
import Glibc

/// The real `FileSystem`: thin wrappers over the `*at` system calls, EINTR retried once here.
public struct PosixFileSystem: FileSystem {
    public init() {}

    private func retrying(_ call: () -> Int32) -> Int32 {
        while true {
            let r = call()
            if r == -1 && errno == EINTR { continue }
            return r
        }
    }

    private func dir(_ d: FileDescriptor?) -> Int32 { d?.rawValue ?? AT_FDCWD }

    public func open(_ name: String, relativeTo directory: FileDescriptor?, flags: OpenFlags, mode: UInt32)
        throws -> FileDescriptor
    {
        var raw = O_CLOEXEC
        if flags.contains(.readWrite) { raw |= O_RDWR } else if flags.contains(.writeOnly) { raw |= O_WRONLY }
        if flags.contains(.create) { raw |= O_CREAT }
        if flags.contains(.exclusive) { raw |= O_EXCL }
        if flags.contains(.append) { raw |= O_APPEND }
        if flags.contains(.directory) { raw |= O_DIRECTORY }
        if flags.contains(.truncate) { raw |= O_TRUNC }
        if flags.contains(.nonBlocking) { raw |= O_NONBLOCK }
        if !flags.contains(.followSymlinks) { raw |= O_NOFOLLOW }
        if flags.contains(.noAccessTime) { raw |= spoold_o_noatime() }
        var fd = FileName.withCString(name) { name in retrying { openat(dir(directory), name, raw, mode_t(mode)) } }
        if fd < 0, errno == EPERM, flags.contains(.noAccessTime) {
            // Another user's file, without CAP_FOWNER: read it with access times, as before.
            let plain = raw & ~spoold_o_noatime()
            fd = FileName.withCString(name) { name in retrying { openat(dir(directory), name, plain, mode_t(mode)) } }
        }
        guard fd >= 0 else { throw SystemError.last(.open, path: name) }
        return FileDescriptor(rawValue: fd)
    }

    public func close(_ fd: FileDescriptor) { _ = Glibc.close(fd.rawValue) }

    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = Glibc.read(fd.rawValue, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw SystemError.last(.read, path: "fd \(fd.rawValue)")
        }
    }

    public func write(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws -> Int {
        while true {
            let n = Glibc.write(fd.rawValue, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw SystemError.last(.write, path: "fd \(fd.rawValue)")
        }
    }

    public func sync(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {
        // Deliberately not retried on EINTR-like failures either: after a failed fsync the kernel
        // may have dropped the dirty pages, and a second "success" would be a lie.
        guard fsync(fd.rawValue) == 0 else { throw SystemError.last(.fsync, path: label) }
    }

    public func syncFileSystem(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {
        guard spoold_syncfs(fd.rawValue) == 0 else { throw SystemError.last(.syncfs, path: label) }
    }

    public func rename(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor)
        throws
    {
        let r = FileName.withCString(from) { from in
            FileName.withCString(to) { to in retrying { renameat(fromDirectory.rawValue, from, toDirectory.rawValue, to) } }
        }
        guard r == 0 else {
            throw SystemError.last(.rename, path: "\(from) -> \(to)")
        }
    }

    public func renameNoReplace(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor)
        throws
    {
        let r = FileName.withCString(from) { from in
            FileName.withCString(to) { to in
                retrying { spoold_rename_noreplace(fromDirectory.rawValue, from, toDirectory.rawValue, to) }
            }
        }
        guard r == 0 else { throw SystemError.last(.rename, path: "\(from) -> \(to)") }
    }

    public func setAttribute(_ name: String, _ value: [UInt8], of fd: FileDescriptor) throws {
        let r = value.withUnsafeBytes { bytes in retrying { spoold_fsetxattr(fd.rawValue, name, bytes.baseAddress, bytes.count) } }
        guard r == 0 else { throw SystemError.last(.fsetxattr, path: name) }
    }

    public func attribute(_ name: String, of fd: FileDescriptor, limit: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max(1, limit))
        let n = buffer.withUnsafeMutableBytes { bytes in spoold_fgetxattr(fd.rawValue, name, bytes.baseAddress, bytes.count) }
        if n < 0 {
            if errno == ENODATA { return nil }
            throw SystemError.last(.fgetxattr, path: name)
        }
        return Array(buffer[0..<n])
    }

    public func remove(_ name: String, in directory: FileDescriptor, isDirectory: Bool) throws {
        let r = FileName.withCString(name) { name in retrying { unlinkat(directory.rawValue, name, isDirectory ? AT_REMOVEDIR : 0) } }
        guard r == 0 else {
            throw SystemError.last(.unlink, path: name)
        }
    }

    public func makeDirectory(_ name: String, in directory: FileDescriptor?, mode: UInt32) throws {
        let r = FileName.withCString(name) { name in retrying { mkdirat(dir(directory), name, mode_t(mode)) } }
        guard r == 0 else {
            throw SystemError.last(.mkdir, path: name)
        }
    }

    public func status(of fd: FileDescriptor) throws -> FileStatus {
        var st = stat()
        guard fstat(fd.rawValue, &st) == 0 else { throw SystemError.last(.fstat, path: "fd \(fd.rawValue)") }
        return FileStatus(st)
    }

    public func status(of name: String, in directory: FileDescriptor) throws -> FileStatus {
        var st = stat()
        guard FileName.withCString(name, { fstatat(directory.rawValue, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            throw SystemError.last(.stat, path: name)
        }
        return FileStatus(st)
    }

    public func list(_ directory: FileDescriptor) throws -> [DirectoryEntry] {
        var entries: [DirectoryEntry] = []
        // Bytes, not text: a name that is not UTF-8 must still open (`FileName`).
        try forEachEntry(directory) { name, type in
            entries.append(DirectoryEntry(name: FileName.decode(name), type: type))
            return true
        }
        return entries
    }

    public func forEachEntry(
        _ directory: FileDescriptor, _ body: (UnsafeRawBufferPointer, FileStatus.FileType) throws -> Bool
    ) throws {
        try readEntries(directory, from: nil) { name, type, _ in
            if name.count <= 2, name.allSatisfy({ $0 == UInt8(ascii: ".") }) { return true }  // "." and ".."
            return try body(name, type)
        }
    }

    public func listsInHashOrder(_ directory: FileDescriptor) -> Bool {
        spoold_lists_in_hash_order(directory.rawValue) == 1
    }

    public func forEachEntry(
        _ directory: FileDescriptor, from position: Int64,
        _ body: (UnsafeRawBufferPointer, FileStatus.FileType, _ next: Int64) throws -> Bool
    ) throws {
        try readEntries(directory, from: position, body)
    }

    /// Every entry from `position` on (nil: from the start, without a `seekdir`), with the
    /// position after it (`d_off`).
    private func readEntries(
        _ directory: FileDescriptor, from position: Int64?,
        _ body: (UnsafeRawBufferPointer, FileStatus.FileType, _ next: Int64) throws -> Bool
    ) throws {
        // A listing of its own: the folder opened again, not a dup(2) of `directory`. A dup
        // shares the open file's position, so two listings of one folder at once (a pass over
        // pending/ on its thread, a count on another) each got a part of the names, and both
        // took them for all. fdopendir takes ownership of the descriptor.
        let own = openat(directory.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard own >= 0 else { throw SystemError.last(.open, path: "fd \(directory.rawValue)") }
        guard let stream = fdopendir(own) else {
            let code = errno
            _ = Glibc.close(own)
            throw SystemError(.opendir, path: "fd \(directory.rawValue)", errno: Errno(rawValue: code))
        }
        defer { closedir(stream) }
        if let position, position != 0 { seekdir(stream, Int(position)) }
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemError.last(.readdir, path: "fd \(directory.rawValue)") }
                return
            }
            let type: FileStatus.FileType
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_REG): type = .regular
            case Int32(DT_DIR): type = .directory
            case Int32(DT_LNK): type = .symlink
            case Int32(DT_FIFO): type = .fifo
            case Int32(DT_SOCK): type = .socket
            case Int32(DT_CHR): type = .characterDevice
            case Int32(DT_BLK): type = .blockDevice
            default: type = .unknown
            }
            guard try body(DirectoryEntryName.bytes(of: entry), type, Int64(entry.pointee.d_off)) else { return }
        }
    }

    public func setModificationTime(_ fd: FileDescriptor, milliseconds: Int64) throws {
        let t = timespec(tv_sec: Int(milliseconds / 1000), tv_nsec: Int(milliseconds % 1000) * 1_000_000)
        var times = (t, t)
        let r = withUnsafePointer(to: &times) { ptr in
            ptr.withMemoryRebound(to: timespec.self, capacity: 2) { futimens(fd.rawValue, $0) }
        }
        guard r == 0 else { throw SystemError.last(.futimens, path: "fd \(fd.rawValue)") }
    }

    public func lock(_ fd: FileDescriptor, exclusive: Bool, wait: Bool) throws -> Bool {
        let op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        if retrying({ flock(fd.rawValue, op) }) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw SystemError.last(.flock, path: "fd \(fd.rawValue)")
    }

    public func unlock(_ fd: FileDescriptor) throws {
        guard retrying({ flock(fd.rawValue, LOCK_UN) }) == 0 else {
            throw SystemError.last(.flock, path: "fd \(fd.rawValue)")
        }
    }

    public func truncate(_ fd: FileDescriptor, to length: Int64) throws {
        guard retrying({ ftruncate(fd.rawValue, off_t(length)) }) == 0 else {
            throw SystemError.last(.ftruncate, path: "fd \(fd.rawValue)")
        }
    }

    public func writerCheck(_ name: String, in directory: FileDescriptor) throws -> WriterCheck {
        _ = PosixFileSystem.leaseBreakSignalIgnored
        let fd = try open(name, relativeTo: directory, flags: [.readOnly, .nonBlocking], mode: 0)
        defer { close(fd) }
        guard retrying({ spoold_take_read_lease(fd.rawValue) }) == 0 else {
            let refused = Errno.current
            return refused == .resourceTemporarilyUnavailable ? .openForWriting : .unknown(errno: refused)
        }
        _ = spoold_release_lease(fd.rawValue)
        return .noWriter
    }

    /// A writer opening the file while we hold the lease makes the kernel signal us (SIGIO, whose
    /// default action ends the process). We give the lease back at once, so the signal is ignored.
    private static let leaseBreakSignalIgnored: Void = { _ = signal(SIGIO, SIG_IGN) }()

    public func allocate(_ fd: FileDescriptor, length: Int64) throws {
        // Returns the error number instead of setting errno.
        var code: Int32
        repeat { code = posix_fallocate(fd.rawValue, 0, off_t(length)) } while code == EINTR
        guard code == 0 else { throw SystemError(.fallocate, path: "fd \(fd.rawValue)", errno: Errno(rawValue: code)) }
    }

    public func seekToEnd(_ fd: FileDescriptor) throws -> Int64 {
        let r = lseek(fd.rawValue, 0, SEEK_END)
        guard r >= 0 else { throw SystemError.last(.lseek, path: "fd \(fd.rawValue)") }
        return Int64(r)
    }

    public func seek(_ fd: FileDescriptor, to offset: Int64) throws {
        guard lseek(fd.rawValue, off_t(offset), SEEK_SET) >= 0 else { throw SystemError.last(.lseek, path: "fd \(fd.rawValue)") }
    }
}
