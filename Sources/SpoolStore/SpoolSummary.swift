import Dispatch
import SpoolCore
import SpoolSystem
import Synchronization

/// Totals per state for `spoold status`, without building one record per item.
///
/// It stats only what the totals need (blobs for bytes, pending jsons for the next-due time),
/// finds the oldest item from the names alone (ids sort by creation time), and splits the stat
/// calls over two threads. With 100,000 queued items this is what keeps `status` fast.
public struct SpoolSummary: Sendable {
    public struct StateTotals: Sendable {
        /// Items: json files (a json is what makes an item visible).
        public var count = 0
        public var bytes: Int64 = 0
        public var oldest: ItemID?
        public init() {}
    }

    public var states: [ItemState: StateTotals] = [:]
    public var nextDue: Timestamp?
    public var incomingFiles = 0
    public var incomingBytes: Int64 = 0
    public var strays: [String] = []

    public static func load(_ spool: Spool) throws -> SpoolSummary {
        var summary = SpoolSummary()
        for state in ItemState.allCases {
            let folder = SpoolFolder(state)
            var totals = StateTotals()
            var blobs: [String] = []
            var pendingJSONs: [String] = []
            // In inflight/, a blob with no json is a direct upload under way: an item too.
            var jsonIDs = Set<ItemID>()
            var blobIDs = Set<ItemID>()
            for entry in try spool.list(folder) {
                guard let name = ItemFileName(parsing: entry.name) else {
                    if !entry.name.hasPrefix(".") { summary.strays.append("\(folder.rawValue)/\(entry.name)") }
                    continue
                }
                switch name.kind {
                case .json:
                    totals.count += 1
                    if totals.oldest.map({ name.id < $0 }) ?? true { totals.oldest = name.id }
                    if state == .pending { pendingJSONs.append(entry.name) }
                    if state == .inflight { jsonIDs.insert(name.id) }
                case .blob:
                    blobs.append(entry.name)
                    if state == .inflight { blobIDs.insert(name.id) }
                }
            }
            for id in blobIDs.subtracting(jsonIDs) {
                totals.count += 1
                if totals.oldest.map({ id < $0 }) ?? true { totals.oldest = id }
            }
            let fd = spool.descriptor(folder)
            totals.bytes = parallelStat(blobs, in: fd, spool.fs).reduce(0) { $0 + $1.size }
            if let due = parallelStat(pendingJSONs, in: fd, spool.fs).map(\.modified).min() {
                summary.nextDue = Timestamp(millisecondsSinceEpoch: due)
            }
            summary.states[state] = totals
        }
        // incoming/ and its subfolders, as the daemon walks them (dot-folders and links not entered).
        try spool.walkIncoming { _, folder, entries in
            let names = entries.map(\.name).filter {
                !$0.hasPrefix(".") && !$0.hasSuffix(SpoolFolder.sidecarSuffix)
            }
            for status in parallelStat(names, in: folder, spool.fs, regularOnly: true) {
                summary.incomingFiles += 1
                summary.incomingBytes += status.size
            }
        }
        return summary
    }

    /// fstatat of each name on two threads; names that vanish meanwhile are skipped.
    private static func parallelStat(
        _ names: [String], in directory: FileDescriptor, _ fs: any FileSystem, regularOnly: Bool = false
    ) -> [(size: Int64, modified: Int64)] {
        let parts = names.count < 1024 ? 1 : 2
        let results = Mutex<[(size: Int64, modified: Int64)]>([])
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var local: [(size: Int64, modified: Int64)] = []
            local.reserveCapacity(names.count / parts + 1)
            for i in stride(from: part, to: names.count, by: parts) {
                guard let status = try? fs.status(of: names[i], in: directory) else { continue }
                if regularOnly && status.type != .regular { continue }
                local.append((status.size, status.modifiedMilliseconds))
            }
            results.withLock { $0 += local }
        }
        return results.withLock { $0 }
    }
}
