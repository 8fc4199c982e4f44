import SpoolCore
import SpoolStore

/// A recovered spool's tree read as items.
struct SpoolView {
    struct Item {
        var folder: String
        var id: ItemID
        var attempt: Int
        var json: [UInt8]?
        var blob: [UInt8]?
    }

    var items: [Item] = []
    var incoming: [String: [UInt8]] = [:]
    var index: [UInt8]?
    var partLogs: [ItemID: [UInt8]] = [:]
    /// `parts/aborts.log`.
    var abortLog: [UInt8]?

    init(_ tree: FileTree) {
        let root = tree.entries[FileTree.root] ?? [:]
        for folder in ["pending", "inflight", "failed", "done"] {
            guard let inode = root[folder] else { continue }
            var byKey: [String: Item] = [:]
            for (name, file) in tree.entries[inode] ?? [:] {
                guard let parsed = ItemFileName(parsing: name), let node = tree.inodes[file], node.kind == .file else { continue }
                let key = "\(parsed.id).\(parsed.attempt)"
                var item = byKey[key] ?? Item(folder: folder, id: parsed.id, attempt: parsed.attempt)
                if parsed.kind == .json { item.json = node.content } else { item.blob = node.content }
                byKey[key] = item
            }
            items += byKey.values.sorted { ($0.id, $0.attempt) < ($1.id, $1.attempt) }
        }
        func walk(_ folder: Int, _ prefix: String) {
            for (name, inode) in tree.entries[folder] ?? [:] where !name.hasPrefix(".") {
                guard let node = tree.inodes[inode] else { continue }
                if node.kind == .directory { walk(inode, prefix + name + "/") } else { incoming[prefix + name] = node.content }
            }
        }
        if let inode = root["incoming"] { walk(inode, "") }
        if let inode = root[SpoolFolder.indexFileName] { index = tree.inodes[inode]?.content }
        if let parts = root["parts"] {
            if let inode = tree.entries[parts]?[AbortLog.fileName] { abortLog = tree.inodes[inode]?.content }
            for (name, inode) in tree.entries[parts] ?? [:] where name.hasSuffix(".log") && name != AbortLog.fileName {
                if let id = ItemID(String(name.dropLast(4))), let node = tree.inodes[inode] { partLogs[id] = node.content }
            }
        }
    }
}
