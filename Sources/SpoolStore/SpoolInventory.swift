import SpoolCore
import SpoolSystem

/// A read-only census of a spool for the inspection commands (`ls`, `show`, `retry`, `purge`,
/// `check`): one pass over each folder, one fstatat per file (per wanted file, for commands that
/// name ids). Safe while a daemon runs: a file that vanishes between readdir and stat is simply
/// skipped. `status` has its own cheaper `SpoolSummary`.
public struct SpoolInventory {
    public struct Item: Sendable {
        public var id: ItemID
        public var location: ItemLocation
        public var hasJSON: Bool
        public var blobSize: Int64?
        /// The json's mtime: for a pending item, when it may next be tried.
        public var jsonModified: Timestamp?
    }

    public var items: [Item]
    /// Names in state folders that are not item files.
    public var strays: [String]

    /// - Parameter wanted: when given, only the files of items whose id it accepts are stat'ed and
    ///   listed, so a command that names a few ids costs one readdir per folder, not a stat per file.
    public static func load(
        _ spool: Spool, states: [ItemState] = ItemState.allCases, wanted: ((ItemID) -> Bool)? = nil
    ) throws -> SpoolInventory {
        var items: [Item] = []
        var strays: [String] = []
        for state in states {
            let folder = SpoolFolder(state)
            let fd = spool.descriptor(folder)
            var byID: [ItemID: Item] = [:]
            for entry in try spool.list(folder) {
                guard let name = ItemFileName(parsing: entry.name) else {
                    if !entry.name.hasPrefix(".") { strays.append("\(folder.rawValue)/\(entry.name)") }
                    continue
                }
                if let wanted, !wanted(name.id) { continue }
                // A folder named like an item file is no item (recovery sets it aside; `check` says so).
                guard let status = try? spool.fs.status(of: entry.name, in: fd), status.type == .regular else { continue }
                var item = byID[name.id] ?? Item(
                    id: name.id, location: ItemLocation(state, attempt: name.attempt), hasJSON: false)
                switch name.kind {
                case .json:
                    item.hasJSON = true
                    item.location = ItemLocation(state, attempt: name.attempt)
                    item.jsonModified = Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds)
                case .blob:
                    item.blobSize = status.size
                }
                byID[name.id] = item
            }
            items += byID.values.sorted { $0.id < $1.id }
        }
        return SpoolInventory(items: items, strays: strays)
    }

    /// For `load(wanted:)`: the items `find` could return for any of `texts` (full ids or prefixes).
    public static func matchingAny(of texts: [String]) -> (ItemID) -> Bool {
        { id in texts.contains { id.rawValue.hasPrefix($0) } }
    }

    /// Finds an item by full id or unique prefix.
    public func find(_ text: String) throws -> Item {
        if let exact = items.first(where: { $0.id.rawValue == text }) { return exact }
        let matches = items.filter { $0.id.rawValue.hasPrefix(text) }
        guard matches.count == 1 else {
            if matches.isEmpty { throw SpoolError.noSuchItem(text) }
            throw SpoolError.ambiguousItem(text, matches.count)
        }
        return matches[0]
    }
}
