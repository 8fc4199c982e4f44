import Glibc
import SpoolCore
import SpoolSystem

/// A read-only census of a spool for the inspection commands (`ls`, `show`, `retry`, `purge`,
/// `check`): one pass over each folder, one fstatat per file (per wanted file, for commands that
/// name ids). Safe while a daemon runs: a file that vanishes between readdir and stat is simply
/// skipped. `status` has its own cheaper `SpoolSummary`.
///
/// `load` holds every item; `forEachBatch` hands them over a batch at a time, so a command over a
/// folder of a million items holds a thousand, whatever the spool holds.
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

    /// Ids an operator named: full ids or prefixes, matched on a name's bytes before any string
    /// is made of it (a folder of a million names costs no memory).
    public struct Matching: Sendable {
        public var texts: [String]
        public init(anyOf texts: [String]) { self.texts = texts }

        public func matches(_ id: UnsafeRawBufferPointer) -> Bool {
            texts.contains { text in
                var text = text
                return text.withUTF8 { prefix in
                    prefix.count <= id.count && (prefix.isEmpty || memcmp(prefix.baseAddress!, id.baseAddress!, prefix.count) == 0)
                }
            }
        }
    }

    /// For `load(wanted:)`: the items `find` could return for any of `texts` (full ids or prefixes).
    public static func matchingAny(of texts: [String]) -> Matching { Matching(anyOf: texts) }

    /// - Parameter wanted: when given, only the files of items whose id it accepts are stat'ed and
    ///   listed, so a command that names a few ids costs one read of each folder's names (no
    ///   list of them kept), not a stat per file.
    public static func load(
        _ spool: Spool, states: [ItemState] = ItemState.allCases, wanted: Matching? = nil
    ) throws -> SpoolInventory {
        var items: [Item] = []
        var strays: [String] = []
        for state in states {
            let folder = SpoolFolder(state)
            let fd = spool.descriptor(folder)
            var byID: [ItemID: Item] = [:]
            try spool.fs.forEachEntry(fd) { entry, _ in
                guard let shape = ItemFileName.shape(of: entry) else {
                    if entry.first != UInt8(ascii: ".") { strays.append("\(folder.rawValue)/\(String(decoding: entry, as: UTF8.self))") }
                    return true
                }
                if let wanted, !wanted.matches(UnsafeRawBufferPointer(rebasing: entry[0..<shape.idLength])) { return true }
                let entryName = String(decoding: entry, as: UTF8.self)
                guard let name = ItemFileName(parsing: entryName) else { return true }
                // A folder named like an item file is no item (recovery sets it aside; `check` says so).
                guard let status = try? spool.fs.status(of: entryName, in: fd), status.type == .regular else { return true }
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
                return true
            }
            items += byID.values.sorted { $0.id < $1.id }
        }
        return SpoolInventory(items: items, strays: strays)
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

    /// Names in the state folders that are not item files (dot-names aside), read name by name.
    public static func strays(in spool: Spool) throws -> [String] {
        var strays: [String] = []
        for state in ItemState.allCases {
            let folder = SpoolFolder(state)
            try spool.fs.forEachEntry(spool.descriptor(folder)) { entry, _ in
                if ItemFileName.shape(of: entry) == nil, entry.first != UInt8(ascii: ".") {
                    strays.append("\(folder.rawValue)/\(String(decoding: entry, as: UTF8.self))")
                }
                return true
            }
        }
        return strays
    }

    /// The items of `states` (in that order), read name by name and handed to `body` in batches
    /// of at most `batchSize`, each sorted by state and id: a folder of a million items costs a
    /// batch of memory, and the first batch comes at once. Items are in the folders' order
    /// across batches (a batch holds the next items read, not the next ids), so output of a
    /// folder larger than a batch is sorted batch by batch. An item is its json; a blob whose
    /// json is not beside it is an item too (a direct upload in inflight/, or damage `check`
    /// names). `wanted` picks items by their id's bytes before any string or stat is made (the
    /// ids a command names). `body` may move the items it gets (`retry`, `purge`): a name
    /// moved out of a folder while it is read is not read again.
    /// `loneBlobs` false: only items with a json (no stat for each blob's json: `check`, whose
    /// recovery half names lone blobs already).
    public static func forEachBatch(
        _ spool: Spool, states: [ItemState] = ItemState.allCases, batchSize: Int = 1000,
        wanted: ((UnsafeRawBufferPointer) -> Bool)? = nil, loneBlobs: Bool = true, _ body: ([Item]) throws -> Void
    ) throws {
        var batch: [Item] = []
        func flush() throws {
            guard !batch.isEmpty else { return }
            let order = Dictionary(uniqueKeysWithValues: states.enumerated().map { ($1, $0) })
            batch.sort { a, b in
                a.location.state != b.location.state ? order[a.location.state, default: 0] < order[b.location.state, default: 0] : a.id < b.id
            }
            for i in batch.indices { describe(&batch[i], in: spool) }
            let full = batch
            batch.removeAll(keepingCapacity: true)
            try body(full)
        }
        for state in states {
            let folder = SpoolFolder(state)
            let fd = spool.descriptor(folder)
            try spool.fs.forEachEntry(fd) { entry, type in
                guard let shape = ItemFileName.shape(of: entry), type == .regular || type == .unknown else { return true }
                let idBytes = UnsafeRawBufferPointer(rebasing: entry[0..<shape.idLength])
                if shape.kind == .blob && !loneBlobs { return true }
                if let wanted, !wanted(idBytes) { return true }
                guard let id = ItemID(String(decoding: idBytes, as: UTF8.self)) else { return true }
                let location = ItemLocation(state, attempt: shape.attempt)
                if shape.kind == .blob {
                    // Its json's entry makes the item; alone, the blob does. A name read before its
                    // item was moved (`body` retried it) is gone: no item.
                    let json = ItemFileName(id: id, attempt: shape.attempt, kind: .json).description
                    if (try? spool.fs.status(of: json, in: fd)) != nil { return true }
                    let blob = ItemFileName(id: id, attempt: shape.attempt, kind: .blob).description
                    guard let status = try? spool.fs.status(of: blob, in: fd), status.type == .regular else { return true }
                }
                batch.append(Item(id: id, location: location, hasJSON: shape.kind == .json))
                if batch.count >= batchSize { try flush() }
                return true
            }
        }
        try flush()
    }

    /// Fills in an item's blob size and json mtime (a stat each); a file gone meanwhile stays nil.
    private static func describe(_ item: inout Item, in spool: Spool) {
        let fd = spool.descriptor(SpoolFolder(item.location.state))
        let blob = ItemFileName(id: item.id, attempt: item.location.attempt, kind: .blob).description
        if let status = try? spool.fs.status(of: blob, in: fd), status.type == .regular { item.blobSize = status.size }
        if item.hasJSON {
            let json = ItemFileName(id: item.id, attempt: item.location.attempt, kind: .json).description
            if let status = try? spool.fs.status(of: json, in: fd) {
                item.jsonModified = Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds)
            }
        }
    }
}
