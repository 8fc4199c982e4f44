import Glibc
import SpoolSystem

/// incoming/ and its subfolders. A path under incoming/ (`2026-11-23/cam7/fox.jpg`) is opened one
/// folder at a time, each with O_NOFOLLOW: no symlink anywhere in it is followed, so a folder
/// swapped for a link between a scan and an open cannot lead out of incoming/.
extension Spool {
    /// Deepest folder level under incoming/ that is walked; deeper folders are left alone.
    static let maximumIncomingDepth = 32

    /// A name under incoming/ whose file or folder a writer is still working on: the Maildir
    /// rule (a dot-name) applied to every component of the path.
    public static func isWorkInProgress(_ path: String) -> Bool {
        path.hasPrefix(".") || path.contains("/.")
    }

    /// Runs `body` with the folder holding `path` (opened for the call) and the last name in it.
    func withIncomingFolder<T>(of path: String, _ body: (FileDescriptor, String) throws -> T) throws -> T {
        let parent = try openIncomingParent(path)
        defer { if parent.owned { fs.close(parent.folder) } }
        return try body(parent.folder, parent.name)
    }

    /// The folder holding `path` and the last name in it; `owned` folders are the caller's to close
    /// (incoming/ itself is not).
    func openIncomingParent(_ path: String) throws -> (folder: FileDescriptor, name: String, owned: Bool) {
        var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let leaf = components.popLast() else { throw SystemError(.open, path: "incoming/\(path)", errno: .noSuchFileOrDirectory) }
        if components.isEmpty { return (descriptor(.incoming), leaf, false) }
        return (try openIncomingFolder(components), leaf, true)
    }

    /// Opens a folder under incoming/ by its components (at least one), none of them followed if
    /// a symlink.
    func openIncomingFolder(_ components: [String]) throws -> FileDescriptor {
        var current: FileDescriptor? = nil
        for component in components {
            let parent = current ?? descriptor(.incoming)
            do {
                let next = try fs.open(component, relativeTo: parent, flags: [.directory, .nonBlocking], mode: 0)
                if let current { fs.close(current) }
                current = next
            } catch {
                if let current { fs.close(current) }
                throw error
            }
        }
        guard let current else { preconditionFailure("no components") }
        return current
    }

    /// Opens a folder under incoming/ (`""` is incoming/ itself, returned as a duplicate so the
    /// caller always closes what it gets).
    func openIncomingFolder(_ path: String) throws -> FileDescriptor {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if components.isEmpty { return try fs.open(".", relativeTo: descriptor(.incoming), flags: [.directory], mode: 0) }
        return try openIncomingFolder(components)
    }

    /// `fstatat` of a path under incoming/, no link followed.
    public func incomingStatus(_ path: String) throws -> FileStatus {
        try withIncomingFolder(of: path) { folder, name in try fs.status(of: name, in: folder) }
    }

    /// Whether a process holds a file under incoming/ open for writing (`FileSystem.writerCheck`).
    public func incomingWriterCheck(_ path: String) throws -> WriterCheck {
        try withIncomingFolder(of: path) { folder, name in try fs.writerCheck(name, in: folder) }
    }

    /// `fstatat` of `name` in a folder under incoming/ the caller has open (from `walkIncoming`).
    public func incomingStatus(_ name: String, in folder: FileDescriptor) throws -> FileStatus {
        try fs.status(of: name, in: folder)
    }

    /// `incomingWriterCheck` of `name` in a folder under incoming/ the caller has open.
    public func incomingWriterCheck(_ name: String, in folder: FileDescriptor) throws -> WriterCheck {
        try fs.writerCheck(name, in: folder)
    }

    /// Reads a sidecar under incoming/ with the owner of the file read (`fstat` of the descriptor
    /// that read it), or nil when there is none.
    public func readIncomingSidecar(_ path: String, limit: Int) throws -> (bytes: [UInt8], owner: UInt32)? {
        do {
            return try withIncomingFolder(of: path) { folder, name in
                let read = try readSmallFileAndStatus(name, in: folder, label: "incoming/\(path)", limit: limit)
                return (read.bytes, read.status.owner)
            }
        } catch let error as SystemError where error.isNotFound {
            return nil
        }
    }

    /// Removes a file under incoming/ (a consumed sidecar); a missing file is fine. Folders are
    /// never removed: a producer may still be writing into them.
    public func removeIncomingFile(_ path: String) throws {
        do {
            try withIncomingFolder(of: path) { folder, name in try fs.remove(name, in: folder, isDirectory: false) }
        } catch let e as SystemError where e.isNotFound {}
    }

    /// Walks incoming/ from the folder at `path` (`""`: all of it), depth first. For each folder,
    /// `entering` runs before it is listed (so an inotify watch set there misses nothing created
    /// afterwards), then `visit` gets its entries. Dot-folders (work in progress) and symlinks
    /// are not entered; a folder that vanishes or cannot be read is skipped and reported to
    /// `skipped`. `visit` sees every entry, subfolders included.
    public func walkIncoming(
        from path: String = "",
        entering: (String, FileDescriptor) -> Void = { _, _ in },
        skipped: (String, SystemError) -> Void = { _, _ in },
        visit: (String, FileDescriptor, [DirectoryEntry]) throws -> Void
    ) throws {
        let depth = path.split(separator: "/").count
        let root: FileDescriptor
        do { root = try openIncomingFolder(path) } catch let error as SystemError where !path.isEmpty {
            skipped(path, error)
            return
        }
        defer { fs.close(root) }
        try walk(path, root, depth: depth, entering: entering, skipped: skipped, visit: visit)
    }

    private func walk(
        _ path: String, _ folder: FileDescriptor, depth: Int, entering: (String, FileDescriptor) -> Void,
        skipped: (String, SystemError) -> Void, visit: (String, FileDescriptor, [DirectoryEntry]) throws -> Void
    ) throws {
        entering(path, folder)
        let entries: [DirectoryEntry]
        do { entries = try fs.list(folder) } catch let error as SystemError where !path.isEmpty {
            skipped(path, error)
            return
        }
        try visit(path, folder, entries)
        guard depth < Spool.maximumIncomingDepth else { return }
        for entry in entries where !entry.name.hasPrefix(".") {
            var isFolder = entry.type == .directory
            if entry.type == .unknown { isFolder = (try? fs.status(of: entry.name, in: folder))?.type == .directory }
            guard isFolder else { continue }
            let child = path.isEmpty ? entry.name : path + "/" + entry.name
            let fd: FileDescriptor
            do { fd = try fs.open(entry.name, relativeTo: folder, flags: [.directory, .nonBlocking], mode: 0) } catch let error as SystemError {
                skipped(child, error)  // vanished, or swapped for a symlink (ELOOP) or a file (ENOTDIR)
                continue
            }
            defer { fs.close(fd) }
            try walk(child, fd, depth: depth + 1, entering: entering, skipped: skipped, visit: visit)
        }
    }
}
