/// One step of a recorded workload, in the terms of a power cut: a change to a folder's names
/// (`link`, `rename`, `unlink`), a change to an inode's contents (`write` and the rest), a
/// barrier (`syncFile`, `syncFolder`, `syncAll`), or a workload's note (`event`).
public enum TraceOp: Sendable {
    /// A new name for a new inode (`open(O_CREAT)`, `mkdir`).
    case link(folder: Int, name: String, inode: Int, kind: FileTree.Kind)
    /// `rename(2)`; `fromFolder` nil for a file renamed in from outside the spool.
    case rename(fromFolder: Int?, fromName: String, toFolder: Int, toName: String, inode: Int)
    case unlink(folder: Int, name: String, inode: Int)
    case write(inode: Int, offset: Int, bytes: [UInt8])
    case truncate(inode: Int, length: Int)
    case setAttribute(inode: Int, name: String, value: [UInt8])
    case setModificationTime(inode: Int, milliseconds: Int64)
    /// `posix_fallocate`: the file is at least `length` long (zeros added).
    case allocate(inode: Int, length: Int)
    /// `fsync` of a file: its contents so far are durable.
    case syncFile(inode: Int, key: SyncKey)
    /// `fsync` of a folder: its names so far are durable.
    case syncFolder(inode: Int, key: SyncKey)
    /// `syncfs`: everything so far is durable.
    case syncAll(key: SyncKey)
    /// A durability call the explorer was told to leave out (`PowerCutFileSystem.leftOut`).
    case leftOut(key: SyncKey)
    case event(PowerCutEvent)

    /// The folders whose names this changes (empty for anything but `link`, `rename`, `unlink`).
    var folders: [Int] {
        switch self {
        case .link(let folder, _, _, _), .unlink(let folder, _, _): [folder]
        case .rename(let from, _, let to, _, _): from.map { [$0, to] } ?? [to]
        default: []
        }
    }

    /// The (folder, name) slots this changes.
    var slots: [Slot] {
        switch self {
        case .link(let folder, let name, _, _), .unlink(let folder, let name, _): [Slot(folder: folder, name: name)]
        case .rename(let from, let fromName, let to, let toName, _):
            (from.map { [Slot(folder: $0, name: fromName)] } ?? []) + [Slot(folder: to, name: toName)]
        default: []
        }
    }

    /// The inode whose contents this changes, for `write` and its kind.
    var dataInode: Int? {
        switch self {
        case .write(let inode, _, _), .truncate(let inode, _), .setAttribute(let inode, _, _),
            .setModificationTime(let inode, _), .allocate(let inode, _):
            inode
        default: nil
        }
    }

    var isNameChange: Bool { !folders.isEmpty }

    struct Slot: Hashable {
        var folder: Int
        var name: String
    }

    /// Applies the change to `tree` (barriers and events change nothing). `tear` cuts a write:
    /// only its first bytes, or its whole length as garbage.
    func apply(to tree: inout FileTree, tear: Tear? = nil) {
        switch self {
        case .link(let folder, let name, let inode, let kind):
            if tree.inodes[inode] == nil { tree.inodes[inode] = FileTree.Inode(kind: kind) }
            if kind == .directory, tree.entries[inode] == nil { tree.entries[inode] = [:] }
            tree.entries[folder, default: [:]][name] = inode
        case .rename(let from, let fromName, let to, let toName, let inode):
            if let from, tree.entries[from]?[fromName] == inode { tree.entries[from]?[fromName] = nil }
            if tree.inodes[inode] == nil { tree.inodes[inode] = FileTree.Inode(kind: .file) }
            tree.entries[to, default: [:]][toName] = inode
        case .unlink(let folder, let name, let inode):
            if tree.entries[folder]?[name] == inode { tree.entries[folder]?[name] = nil }
        case .write(let inode, let offset, var bytes):
            switch tear {
            case .none: break
            case .prefix(let kept): bytes = Array(bytes.prefix(kept))
            case .garbage(let seed):
                var random = SeededRandom(state: seed)
                bytes = bytes.map { _ in UInt8(truncatingIfNeeded: random.next()) }
            }
            tree.changeFile(inode) { node in
                if node.content.count < offset { node.content += [UInt8](repeating: 0, count: offset - node.content.count) }
                let end = offset + bytes.count
                if node.content.count < end { node.content += [UInt8](repeating: 0, count: end - node.content.count) }
                node.content.replaceSubrange(offset..<end, with: bytes)
            }
        case .truncate(let inode, let length):
            tree.changeFile(inode) { node in
                if node.content.count > length { node.content.removeSubrange(length...) } else {
                    node.content += [UInt8](repeating: 0, count: length - node.content.count)
                }
            }
        case .allocate(let inode, let length):
            tree.changeFile(inode) { node in
                if node.content.count < length { node.content += [UInt8](repeating: 0, count: length - node.content.count) }
            }
        case .setAttribute(let inode, let name, let value):
            tree.changeFile(inode) { $0.attributes[name] = value }
        case .setModificationTime(let inode, let milliseconds):
            tree.changeFile(inode) { $0.modifiedMilliseconds = milliseconds }
        case .syncFile, .syncFolder, .syncAll, .leftOut, .event:
            break
        }
    }
}

/// How a write that was under way at the power cut may be found afterwards (ALICE: an append
/// may be partly present, or its length present and its bytes garbage).
public enum Tear: Sendable, Hashable {
    /// Only the first `kept` bytes.
    case prefix(Int)
    /// The whole length, holding pseudo-random bytes from `seed`.
    case garbage(UInt64)
}

extension FileTree {
    /// Changes an inode's contents, creating it as a file if the tree has none (its name was not
    /// kept, or not yet given).
    mutating func changeFile(_ inode: Int, _ change: (inout Inode) -> Void) {
        var node = inodes[inode] ?? Inode(kind: .file)
        change(&node)
        inodes[inode] = node
    }
}
