import Foundation
import Glibc
import SpoolSystem

/// A `FileSystem` for crash-consistency tests (LevelDB's `FaultInjectionTestEnv`, SQLite's crash
/// VFS, ALICE's recorder): it performs every call on the real file system, so the workload
/// runs as it would, and records in the terms of a power cut what each call changed in the
/// spool: a folder's names (create, mkdir, rename, unlink), an inode's contents (write,
/// truncate, fallocate, fsetxattr, futimens), and every `fsync` of a file or folder and every
/// `syncfs`, which are the only things a power cut respects (`CrashStates` builds the states it
/// may leave from the trace). Workloads add their promises to the same trace (`note`).
///
/// The real syncs are not made (the folder is scratch; what a sync makes durable is the trace's
/// business, not the disk's). One durability call can be left out (`leftOut`) to show that the
/// explorer notices its absence.
///
/// Files outside the spool that are renamed into it (`enqueue --move`) enter the trace when
/// first opened, as written but not synced: a user's file is only as durable as spoold makes it.
public final class PowerCutFileSystem: FileSystem, @unchecked Sendable {
    /// The spool's root folder: the tree recorded. Everything else is outside.
    public let rootPath: String
    /// The tree as it was when recording began: durable, the starting point of every crash state.
    public let base: FileTree

    private let real = PosixFileSystem()
    private let lock = NSLock()
    /// The names as they are now (contents are not followed): how a name is resolved to an inode.
    private var live: FileTree
    private var nextInode: Int
    private var recorded: [TraceOp] = []
    /// Open descriptors by number: the inode each one reads or writes.
    private var opened: [Int32: Int] = [:]
    /// Files outside the spool opened so far, by path: their inodes (not under any name).
    private var outsideInodes: [String: Int] = [:]
    /// A folder inode's path below the root (`pending`, `incoming/cam7`; the root is `SPOOL`).
    private var folderPaths: [Int: String] = [FileTree.root: "SPOOL"]
    private var seen: [SyncKey: Int] = [:]
    private var problems: [String] = []
    private var omitted: SyncKey?

    /// The extended attributes read with the tree and kept in crash states.
    public static let attributeNames = ["user.spoold.name"]

    /// Starts recording the folder at `rootPath` (absolute), whose present contents are durable.
    public init(rootPath: String) throws {
        var path = rootPath
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.rootPath = path
        let (tree, next) = try FileTree.read(path, attributeNames: PowerCutFileSystem.attributeNames)
        base = tree
        live = tree
        nextInode = next
        func paths(_ folder: Int, _ prefix: String) {
            for (name, inode) in tree.entries[folder] ?? [:] where tree.inodes[inode]?.kind == .directory {
                folderPaths[inode] = prefix + name
                paths(inode, prefix + name + "/")
            }
        }
        paths(FileTree.root, "")
    }

    /// The trace so far.
    public var trace: [TraceOp] { lock.withLock { recorded } }

    /// Every durability call seen so far, with how many times it was made.
    public var durabilityCalls: [SyncKey: Int] { lock.withLock { seen } }

    /// Calls the model could not follow (a name it does not know): a workload that touches the
    /// spool behind this file system's back. The explorer refuses to trust such a trace.
    public var modelProblems: [String] { lock.withLock { problems } }

    /// The durability call to leave out: recorded as `leftOut`, it makes nothing durable. A
    /// target of `*` leaves out every call made at that line.
    public var leftOut: SyncKey? {
        get { lock.withLock { omitted } }
        set { lock.withLock { omitted = newValue } }
    }

    private func omits(_ key: SyncKey) -> Bool {
        guard let omitted else { return false }
        return key == omitted || (omitted.target == "*" && omitted.site == key.site)
    }

    /// Adds a workload's promise to the trace, in order with the calls.
    public func note(_ event: PowerCutEvent) { lock.withLock { recorded.append(.event(event)) } }

    // MARK: Resolving names

    private enum Place {
        /// A name in a folder of the spool.
        case inside(folder: Int, name: String)
        /// The spool's root folder itself, opened by path.
        case root
        /// A path outside the spool.
        case outside(String)
    }

    private func place(_ name: String, in directory: FileDescriptor?) -> Place {
        if let directory, directory.rawValue != AT_FDCWD {
            guard let folder = opened[directory.rawValue] else {
                problems.append("\(name): relative to descriptor \(directory.rawValue), which was not opened through this file system")
                return .outside(name)
            }
            return .inside(folder: folder, name: name)
        }
        if name == rootPath { return .root }
        guard name.hasPrefix(rootPath + "/") else { return .outside(name) }
        var components = name.dropFirst(rootPath.count + 1).split(separator: "/").map(String.init)
        guard let leaf = components.popLast() else { return .root }
        var folder = FileTree.root
        for component in components {
            guard let next = live.inode(named: component, in: folder) else {
                problems.append("\(name): no folder \(component) in the model")
                return .outside(name)
            }
            folder = next
        }
        return .inside(folder: folder, name: leaf)
    }

    private func newInode() -> Int {
        defer { nextInode += 1 }
        return nextInode
    }

    /// The inode of a file outside the spool, made on first sight with its bytes written (not
    /// synced).
    private func outsideInode(_ path: String) -> Int {
        if let inode = outsideInodes[path] { return inode }
        let inode = newInode()
        outsideInodes[path] = inode
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))).map { Array($0) } ?? []
        recorded.append(.write(inode: inode, offset: 0, bytes: bytes))
        return inode
    }

    private func record(_ op: TraceOp) {
        recorded.append(op)
        if op.isNameChange { op.apply(to: &live) }
        if case .link(let folder, let name, let inode, .directory) = op {
            folderPaths[inode] = folder == FileTree.root ? name : "\(folderPaths[folder] ?? "?")/\(name)"
        }
    }

    // MARK: FileSystem

    public func open(_ name: String, relativeTo directory: FileDescriptor?, flags: OpenFlags, mode: UInt32) throws
        -> FileDescriptor
    {
        try lock.withLock {
            let where_ = place(name, in: directory)
            var existing: Int?
            if case .inside(let folder, let leaf) = where_ { existing = leaf == "." ? folder : live.inode(named: leaf, in: folder) }
            let fd = try real.open(name, relativeTo: directory, flags: flags, mode: mode)
            switch where_ {
            case .root:
                opened[fd.rawValue] = FileTree.root
            case .outside(let path):
                if !flags.contains(.directory) { opened[fd.rawValue] = outsideInode(path) }
            case .inside(let folder, let leaf):
                if let existing {
                    opened[fd.rawValue] = existing
                    if flags.contains(.truncate) { record(.truncate(inode: existing, length: 0)) }
                } else if flags.contains(.create) {
                    let inode = newInode()
                    record(.link(folder: folder, name: leaf, inode: inode, kind: .file))
                    opened[fd.rawValue] = inode
                } else {
                    problems.append("opened \(folderPaths[folder] ?? "?")/\(leaf), a name the model does not know")
                }
            }
            return fd
        }
    }

    public func close(_ fd: FileDescriptor) {
        lock.withLock {
            opened[fd.rawValue] = nil
            real.close(fd)
        }
    }

    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try real.read(fd, into: buffer)
    }

    public func write(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws -> Int {
        try lock.withLock {
            let n = try real.write(fd, from: buffer)
            if n > 0, let inode = opened[fd.rawValue] {
                // Where it went: O_APPEND writes land at the end, whatever the position was.
                let end = Int(lseek(fd.rawValue, 0, SEEK_CUR))
                record(.write(inode: inode, offset: end - n, bytes: Array(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))))
            }
            return n
        }
    }

    public func sync(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {
        lock.withLock {
            guard let inode = opened[fd.rawValue] else {
                problems.append("fsync of \(label), a descriptor not opened through this file system")
                return
            }
            let isFolder = live.inodes[inode]?.kind == .directory
            let key = SyncKey(site: site, target: isFolder ? folderPaths[inode] ?? "?" : "file")
            seen[key, default: 0] += 1
            if omits(key) {
                recorded.append(.leftOut(key: key))
            } else {
                recorded.append(isFolder ? .syncFolder(inode: inode, key: key) : .syncFile(inode: inode, key: key))
            }
        }
    }

    public func syncFileSystem(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {
        lock.withLock {
            let key = SyncKey(site: site, target: "syncfs")
            seen[key, default: 0] += 1
            recorded.append(omits(key) ? .leftOut(key: key) : .syncAll(key: key))
        }
    }

    public func rename(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor) throws {
        try renaming(from, fromDirectory, to, toDirectory) { try real.rename(from, in: fromDirectory, to: to, in: toDirectory) }
    }

    public func renameNoReplace(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor)
        throws
    {
        try renaming(from, fromDirectory, to, toDirectory) {
            try real.renameNoReplace(from, in: fromDirectory, to: to, in: toDirectory)
        }
    }

    private func renaming(
        _ from: String, _ fromDirectory: FileDescriptor, _ to: String, _ toDirectory: FileDescriptor, _ body: () throws -> Void
    ) throws {
        try lock.withLock {
            let source = place(from, in: fromDirectory)
            let target = place(to, in: toDirectory)
            var inode: Int?
            var fromFolder: Int?
            switch source {
            case .inside(let folder, let name):
                inode = live.inode(named: name, in: folder)
                fromFolder = folder
            case .outside(let path):
                if case .inside = target { inode = outsideInode(path) }
            case .root:
                break
            }
            try body()
            guard case .inside(let toFolder, let toName) = target else { return }
            guard let inode else {
                problems.append("renamed \(from), a name the model does not know")
                return
            }
            let fromName: String = if case .inside(_, let name) = source { name } else { from }
            record(.rename(fromFolder: fromFolder, fromName: fromName, toFolder: toFolder, toName: toName, inode: inode))
        }
    }

    public func remove(_ name: String, in directory: FileDescriptor, isDirectory: Bool) throws {
        try lock.withLock {
            let where_ = place(name, in: directory)
            try real.remove(name, in: directory, isDirectory: isDirectory)
            guard case .inside(let folder, let leaf) = where_ else { return }
            guard let inode = live.inode(named: leaf, in: folder) else {
                problems.append("removed \(leaf), a name the model does not know")
                return
            }
            record(.unlink(folder: folder, name: leaf, inode: inode))
        }
    }

    public func setAttribute(_ name: String, _ value: [UInt8], of fd: FileDescriptor) throws {
        try lock.withLock {
            try real.setAttribute(name, value, of: fd)
            if let inode = opened[fd.rawValue] { record(.setAttribute(inode: inode, name: name, value: value)) }
        }
    }

    public func attribute(_ name: String, of fd: FileDescriptor, limit: Int) throws -> [UInt8]? {
        try real.attribute(name, of: fd, limit: limit)
    }

    public func makeDirectory(_ name: String, in directory: FileDescriptor?, mode: UInt32) throws {
        try lock.withLock {
            let where_ = place(name, in: directory)
            try real.makeDirectory(name, in: directory, mode: mode)
            if case .inside(let folder, let leaf) = where_ {
                record(.link(folder: folder, name: leaf, inode: newInode(), kind: .directory))
            }
        }
    }

    public func status(of fd: FileDescriptor) throws -> FileStatus { try real.status(of: fd) }

    public func status(of name: String, in directory: FileDescriptor) throws -> FileStatus {
        try real.status(of: name, in: directory)
    }

    public func list(_ directory: FileDescriptor) throws -> [DirectoryEntry] { try real.list(directory) }

    public func setModificationTime(_ fd: FileDescriptor, milliseconds: Int64) throws {
        try lock.withLock {
            try real.setModificationTime(fd, milliseconds: milliseconds)
            if let inode = opened[fd.rawValue] { record(.setModificationTime(inode: inode, milliseconds: milliseconds)) }
        }
    }

    public func lock(_ fd: FileDescriptor, exclusive: Bool, wait: Bool) throws -> Bool {
        try real.lock(fd, exclusive: exclusive, wait: wait)
    }

    public func unlock(_ fd: FileDescriptor) throws { try real.unlock(fd) }

    public func truncate(_ fd: FileDescriptor, to length: Int64) throws {
        try lock.withLock {
            try real.truncate(fd, to: length)
            if let inode = opened[fd.rawValue] { record(.truncate(inode: inode, length: Int(length))) }
        }
    }

    public func seekToEnd(_ fd: FileDescriptor) throws -> Int64 { try real.seekToEnd(fd) }

    public func seek(_ fd: FileDescriptor, to offset: Int64) throws { try real.seek(fd, to: offset) }

    public func writerCheck(_ name: String, in directory: FileDescriptor) throws -> WriterCheck {
        try real.writerCheck(name, in: directory)
    }

    public func allocate(_ fd: FileDescriptor, length: Int64) throws {
        try lock.withLock {
            try real.allocate(fd, length: length)
            if let inode = opened[fd.rawValue] { record(.allocate(inode: inode, length: Int(length))) }
        }
    }
}
