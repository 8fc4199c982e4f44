import Foundation
import Glibc
import SpoolSystem

/// A file system as a power cut leaves it, in memory: inodes (folders and files with their bytes,
/// extended attributes and mtime) and the names folders give them. `PowerCutFileSystem` reads the
/// spool into one before a workload, a crash state is that tree with some of the workload's
/// operations applied (`CrashStates`), and `materialize` writes a tree out as a real folder for
/// start-up recovery to work on.
public struct FileTree: Sendable {
    public enum Kind: Sendable { case directory, file }

    public struct Inode: Sendable {
        public var kind: Kind
        public var content: [UInt8] = []
        public var attributes: [String: [UInt8]] = [:]
        public var modifiedMilliseconds: Int64?
    }

    /// The inode of the tree's root folder (the spool itself).
    public static let root = 0

    public var inodes: [Int: Inode] = [FileTree.root: Inode(kind: .directory)]
    /// Folder inode → name → inode.
    public var entries: [Int: [String: Int]] = [FileTree.root: [:]]

    public init() {}

    /// The inode `name` names in `folder`, if any.
    public func inode(named name: String, in folder: Int) -> Int? { entries[folder]?[name] }

    // MARK: Reading a real folder

    /// Reads the folder at `path` and everything below it (folders and regular files: their
    /// bytes, mtime and the extended attribute names in `attributeNames`). Returns the tree and
    /// the next free inode number.
    public static func read(_ path: String, attributeNames: [String]) throws -> (FileTree, nextInode: Int) {
        var tree = FileTree()
        var next = 1
        try readFolder(path, as: FileTree.root, into: &tree, next: &next, attributeNames: attributeNames)
        return (tree, next)
    }

    private static func readFolder(
        _ path: String, as folder: Int, into tree: inout FileTree, next: inout Int, attributeNames: [String]
    ) throws {
        let fs = PosixFileSystem()
        for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
            let full = path + "/" + name
            var st = stat()
            guard lstat(full, &st) == 0 else { continue }
            let inode = next
            next += 1
            if st.st_mode & S_IFMT == S_IFDIR {
                tree.inodes[inode] = Inode(kind: .directory)
                tree.entries[inode] = [:]
                tree.entries[folder, default: [:]][name] = inode
                try readFolder(full, as: inode, into: &tree, next: &next, attributeNames: attributeNames)
            } else if st.st_mode & S_IFMT == S_IFREG {
                var node = Inode(kind: .file)
                node.modifiedMilliseconds = Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec) / 1_000_000
                let fd = try fs.open(full, relativeTo: nil, flags: [.readOnly, .nonBlocking], mode: 0)
                defer { fs.close(fd) }
                node.content = try readToEnd(fd, sizeHint: Int(st.st_size), fs: fs)
                for attribute in attributeNames {
                    if let value = try? fs.attribute(attribute, of: fd, limit: 65536) { node.attributes[attribute] = value }
                }
                tree.inodes[inode] = node
                tree.entries[folder, default: [:]][name] = inode
            }
            // Symlinks, FIFOs and sockets are not part of any workload's spool.
        }
    }

    /// The bytes of an open file, read on the descriptor its attributes are read on (a
    /// `Data(contentsOf:)` opened it again and copied its bytes once more: a fifth of an
    /// exploration's time went into reading states back).
    private static func readToEnd(_ fd: FileDescriptor, sizeHint: Int, fs: PosixFileSystem) throws -> [UInt8] {
        var content = [UInt8](repeating: 0, count: sizeHint + 1)  // one more: a file that grew reads on
        var filled = 0
        while true {
            if filled == content.count { content += [UInt8](repeating: 0, count: max(content.count, 4096)) }
            let n = try content.withUnsafeMutableBytes { try fs.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            if n == 0 { break }
            filled += n
        }
        content.removeSubrange(filled...)
        return content
    }

    // MARK: Writing a real folder

    /// Writes the tree into the empty folder at `path`: folders (0700), files (0600) with their
    /// bytes, attributes and mtime. An inode reached by two names (a rename persisted in both
    /// folders) is written twice.
    public func materialize(at path: String) throws {
        try materializeFolder(FileTree.root, at: path)
    }

    private func materializeFolder(_ folder: Int, at path: String) throws {
        let fs = PosixFileSystem()
        for (name, inode) in (entries[folder] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let node = inodes[inode] else { continue }
            let full = path + "/" + name
            switch node.kind {
            case .directory:
                guard mkdir(full, 0o700) == 0 else { throw SystemError.last(.mkdir, path: full) }
                try materializeFolder(inode, at: full)
            case .file:
                let fd = try fs.open(full, relativeTo: nil, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
                defer { fs.close(fd) }
                try fs.writeAll(fd, node.content, label: full)
                for (attribute, value) in node.attributes { try fs.setAttribute(attribute, value, of: fd) }
                if let time = node.modifiedMilliseconds { try fs.setModificationTime(fd, milliseconds: time) }
            }
        }
    }

    // MARK: Comparing

    /// Every path reachable from the root in order, with what it holds: equal trees give equal
    /// fingerprints, whatever their inode numbers. Only a json's mtime counts (a pending item's
    /// next-attempt time); other files' change with every rewrite and mean nothing to spoold.
    public var fingerprint: Int {
        var hasher = Hasher()
        func walk(_ folder: Int, _ prefix: String) {
            for (name, inode) in (entries[folder] ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let node = inodes[inode] else { continue }
                let path = prefix + name
                hasher.combine(path)
                switch node.kind {
                case .directory:
                    hasher.combine(1)
                    walk(inode, path + "/")
                case .file:
                    hasher.combine(2)
                    hasher.combine(node.content.count)
                    node.content.withUnsafeBytes { hasher.combine(bytes: $0) }
                    for (attribute, value) in node.attributes.sorted(by: { $0.key < $1.key }) {
                        hasher.combine(attribute)
                        value.withUnsafeBytes { hasher.combine(bytes: $0) }
                    }
                    hasher.combine(name.hasSuffix(".json") ? node.modifiedMilliseconds ?? -1 : -1)
                }
            }
            hasher.combine(3)
        }
        walk(FileTree.root, "")
        return hasher.finalize()
    }

    /// Whether `other` holds what this tree holds, as `fingerprint` sees it (the same paths, kinds,
    /// bytes and attributes, and a json's mtime), without hashing either: the answer stops at the
    /// first difference, and two trees alike are compared by `memcmp`.
    public func holdsTheSame(as other: FileTree) -> Bool {
        func same(_ folder: Int, _ otherFolder: Int) -> Bool {
            let mine = entries[folder] ?? [:], theirs = other.entries[otherFolder] ?? [:]
            guard mine.count == theirs.count else { return false }
            for (name, inode) in mine {
                guard let otherInode = theirs[name] else { return false }
                guard let node = inodes[inode], let otherNode = other.inodes[otherInode] else {
                    if (inodes[inode] == nil) != (other.inodes[otherInode] == nil) { return false }
                    continue  // a name without its inode, in both (not in a tree read from a folder)
                }
                switch (node.kind, otherNode.kind) {
                case (.directory, .directory):
                    if !same(inode, otherInode) { return false }
                case (.file, .file):
                    guard equalBytes(node.content, otherNode.content), node.attributes.count == otherNode.attributes.count,
                          node.attributes.allSatisfy({ key, value in otherNode.attributes[key].map { equalBytes(value, $0) } ?? false })
                    else { return false }
                    if name.hasSuffix(".json") && node.modifiedMilliseconds != otherNode.modifiedMilliseconds { return false }
                default:
                    return false
                }
            }
            return true
        }
        return same(FileTree.root, FileTree.root)
    }

    /// `==` of two byte arrays by `memcmp` (a debug build compares `[UInt8]` element by element).
    private func equalBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBytes { x in b.withUnsafeBytes { y in a.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }

    /// The files below the root as `path: size` lines, for messages.
    public var listing: String {
        var lines: [String] = []
        func walk(_ folder: Int, _ prefix: String) {
            for (name, inode) in (entries[folder] ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let node = inodes[inode] else { continue }
                switch node.kind {
                case .directory: walk(inode, prefix + name + "/")
                case .file: lines.append("\(prefix)\(name) (\(node.content.count) B)")
                }
            }
        }
        walk(FileTree.root, "")
        return lines.joined(separator: "\n")
    }
}
