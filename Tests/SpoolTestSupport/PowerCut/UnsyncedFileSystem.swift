import SpoolSystem

/// The real file system without its syncs: the states recovery works on are scratch.
struct UnsyncedFileSystem: FileSystem {
    private let real = PosixFileSystem()
    func open(_ name: String, relativeTo directory: FileDescriptor?, flags: OpenFlags, mode: UInt32) throws -> FileDescriptor {
        try real.open(name, relativeTo: directory, flags: flags, mode: mode)
    }
    func close(_ fd: FileDescriptor) { real.close(fd) }
    func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try real.read(fd, into: buffer) }
    func write(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws -> Int { try real.write(fd, from: buffer) }
    func sync(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {}
    func syncFileSystem(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {}
    func rename(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor) throws {
        try real.rename(from, in: fromDirectory, to: to, in: toDirectory)
    }
    func remove(_ name: String, in directory: FileDescriptor, isDirectory: Bool) throws {
        try real.remove(name, in: directory, isDirectory: isDirectory)
    }
    func renameNoReplace(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor) throws {
        try real.renameNoReplace(from, in: fromDirectory, to: to, in: toDirectory)
    }
    func setAttribute(_ name: String, _ value: [UInt8], of fd: FileDescriptor) throws { try real.setAttribute(name, value, of: fd) }
    func attribute(_ name: String, of fd: FileDescriptor, limit: Int) throws -> [UInt8]? { try real.attribute(name, of: fd, limit: limit) }
    func makeDirectory(_ name: String, in directory: FileDescriptor?, mode: UInt32) throws {
        try real.makeDirectory(name, in: directory, mode: mode)
    }
    func status(of fd: FileDescriptor) throws -> FileStatus { try real.status(of: fd) }
    func status(of name: String, in directory: FileDescriptor) throws -> FileStatus { try real.status(of: name, in: directory) }
    func list(_ directory: FileDescriptor) throws -> [DirectoryEntry] { try real.list(directory) }
    func setModificationTime(_ fd: FileDescriptor, milliseconds: Int64) throws { try real.setModificationTime(fd, milliseconds: milliseconds) }
    func lock(_ fd: FileDescriptor, exclusive: Bool, wait: Bool) throws -> Bool { try real.lock(fd, exclusive: exclusive, wait: wait) }
    func unlock(_ fd: FileDescriptor) throws { try real.unlock(fd) }
    func truncate(_ fd: FileDescriptor, to length: Int64) throws { try real.truncate(fd, to: length) }
    func seekToEnd(_ fd: FileDescriptor) throws -> Int64 { try real.seekToEnd(fd) }
    func seek(_ fd: FileDescriptor, to offset: Int64) throws { try real.seek(fd, to: offset) }
    func writerCheck(_ name: String, in directory: FileDescriptor) throws -> WriterCheck { try real.writerCheck(name, in: directory) }
    func allocate(_ fd: FileDescriptor, length: Int64) throws { try real.allocate(fd, length: length) }
}
