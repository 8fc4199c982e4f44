import Dispatch
import SpoolCore
import SpoolSystem
import Synchronization

/// Totals per state for `spoold status` (and `enqueue`'s limits), at a cost that does not grow
/// with the queue while a daemon runs, and stays near one listing of each folder otherwise.
///
/// While a daemon holds the lock and keeps `SPOOL/counts`, pending/ and inflight/ are taken from
/// it: its running sums, no folder read. Otherwise each state folder is read name by name
/// (`FolderCensus`): counts, ages, the oldest item and the next due time from the names (a stat
/// only for a tried pending item's json, whose mtime is its next-attempt time); bytes from a stat
/// of both files of every item up to `sampleBudget` items a folder, and of a fixed share of the
/// ids beyond that, the sums scaled up (`StateTotals.estimated`).
public struct SpoolSummary: Sendable {
    public struct StateTotals: Sendable {
        /// Items: json files (a json is what makes an item visible; in inflight/ a lone blob too).
        public var count = 0
        /// Payload bytes.
        public var bytes: Int64 = 0
        /// What the items take on disk: the allocated blocks of both files of each.
        public var diskBytes: Int64 = 0
        /// `bytes` and `diskBytes` are scaled up from a sample of the items.
        public var estimated = false
        /// The daemon is still counting them (`bytes`, `diskBytes` are 0).
        public var counting = false
        public var oldest: ItemID?
        public init() {}
    }

    public var states: [ItemState: StateTotals] = [:]
    /// Pending items by age.
    public var pendingByAge = QueueAgeShape()
    public var nextDue: Timestamp?
    public var incomingFiles = 0
    public var incomingBytes: Int64 = 0
    /// Names in the state folders read that are not items (the first few), and how many.
    public var strays: [String] = []
    public var strayCount = 0
    /// The running daemon's figures, when pending/ and inflight/ come from them.
    public var daemonCounts: QueueCountsFile.Contents?

    /// Items a folder may hold before its bytes are estimated from a sample.
    public static let defaultSampleBudget = 4_096

    /// - Parameter daemonPID: the pid holding the spool's lock, if any: its `SPOOL/counts` is used
    ///   when it wrote it.
    public static func load(
        _ spool: Spool, now: Timestamp, daemonPID: Int32? = nil, sampleBudget: Int? = defaultSampleBudget
    ) throws -> SpoolSummary {
        var summary = SpoolSummary()
        if let daemonPID, let counts = QueueCountsFile.read(in: spool), counts.pid == daemonPID {
            summary.daemonCounts = counts
            summary.states[.pending] = totals(counts.pending, counting: counts.counting)
            summary.states[.inflight] = totals(counts.inflight, counting: counts.counting)
            summary.pendingByAge = counts.pendingByAge
            summary.nextDue = counts.nextDue
        }
        let measure: FolderCensus.Measure = sampleBudget.map { .sample(budget: $0) } ?? .all
        for state in ItemState.allCases where summary.states[state] == nil {
            let census = try spool.reading(SpoolFolder(state)).census(measure: measure, now: now, parts: SplitListing.partsForThisMachine)
            var totals = StateTotals()
            let usage = census.usage
            (totals.count, totals.bytes, totals.diskBytes) = (census.items, usage.payloadBytes, usage.diskBytes)
            totals.estimated = census.isEstimated
            totals.oldest = census.oldest
            summary.states[state] = totals
            if state == .pending {
                summary.pendingByAge = census.shape
                summary.nextDue = census.nextDue
            }
            summary.strayCount += census.strayCount
            summary.strays += census.strays.prefix(max(0, 16 - summary.strays.count))
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

    private static func totals(_ figures: QueueCountsFile.Figures, counting: Bool) -> StateTotals {
        var totals = StateTotals()
        totals.count = figures.count
        totals.bytes = figures.payloadBytes ?? 0
        totals.diskBytes = figures.diskBytes ?? 0
        totals.counting = counting
        totals.estimated = figures.estimated
        totals.oldest = figures.oldest
        return totals
    }

    /// The queue (pending and in flight) as the size limits count it.
    public var queued: QueueUsage {
        let pending = states[.pending] ?? StateTotals(), inflight = states[.inflight] ?? StateTotals()
        return QueueUsage(
            items: pending.count + inflight.count, payloadBytes: pending.bytes + inflight.bytes,
            diskBytes: pending.diskBytes + inflight.diskBytes)
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
