import SpoolCore
import SpoolStore
import Synchronization

/// What the engine's queue (pending and in flight) takes, kept as running sums: the one place
/// that knows queued bytes. Each item's files are stat'ed once when it comes into memory (its
/// blob's size, and the allocated blocks of its blob and json: what it takes on disk), and
/// subtracted when it leaves. Shared by the metrics, the size limits, the progress line and the
/// counts `spoold status` reads (`SPOOL/counts`), so none of them rescans pending/. Also kept:
/// when the queued items were made (`ages`), for status's queue shape.
///
/// Sizes are kept by item for the items in memory (at most `--queue-memory`); those waiting in
/// pending/ beyond memory count in one sum (`outside`), which items leave when they come into
/// memory and join when memory gives them back. At start, when the queue is larger than memory,
/// what lies beyond it is counted once, on a thread of its own (`FolderReading.census`), so the
/// first upload does not wait for it; until it is done `usage` is nil (the size limits hold
/// files back meanwhile); the start's pass over pending/ makes it in its own listing
/// (`pendingCensus`), or, when no pass runs, a listing of its own. That count lists every name but stats the files of at most about
/// `startSampleBudget` items, a fixed share of the ids, and scales their sums up (`isEstimated`):
/// a stat of both files of a million items would take a core for many seconds, from the uploads
/// of a daemon just back from an outage, and hold its intake as long. A recycled image takes the
/// sums its last image handed on instead (`resume(from:)`). Changes while it counts are kept aside and added to
/// its result; an item that moved while it was being counted may be off until the queue beyond
/// memory empties, when the sums start again from memory alone.
public final class QueueBytes: EngineObserver {
    private let spool: Spool
    private var sizes: [ItemID: QueueUsage] = [:]
    private var inMemory = QueueUsage()
    /// Beyond memory; while the start-up count runs, the changes since it began.
    private var outside = QueueUsage()
    private var ages = CreationMinutes()
    private var counting = false
    /// Whether `outside` holds a sum scaled up from a sample.
    public private(set) var isEstimated = false
    private let census = CensusInbox()

    /// The most items whose files the start-up count stats (about; a fixed share of the ids).
    let startSampleBudget: Int
    public static let defaultStartSampleBudget = 16_384
    private weak var engine: Engine?

    public init(spool: Spool, startSampleBudget: Int = QueueBytes.defaultStartSampleBudget) {
        (self.spool, self.startSampleBudget) = (spool, startSampleBudget)
    }

    /// Payload bytes queued, as far as they are known (those in memory while the count runs).
    public var total: Int64 {
        takeCensus()
        return inMemory.payloadBytes + outside.payloadBytes
    }

    /// The queue's items and the bytes they take, or nil while what lies beyond memory is still
    /// being counted. Items are the engine's own count (in memory, in flight, and beyond).
    public var usage: QueueUsage? {
        takeCensus()
        guard !counting else { return nil }
        var usage = (inMemory + outside).clamped
        if let engine { usage.items = engine.items.count + engine.queuedOutsideMemory }
        return usage
    }

    /// The pending items by age at `now` (those in flight left out).
    func pendingShape(_ engine: Engine, now: Timestamp) -> QueueAgeShape {
        ages.fold(now: now)
        var pending = ages
        for id in engine.uploads.keys { if let createdAt = id.createdAt { pending.remove(createdAt) } }
        return pending.shape(now: now)
    }

    /// When the pending items' shape by age next changes by time alone.
    func nextShapeChange(after now: Timestamp) -> Timestamp? { ages.nextChange(after: now) }

    /// What the items in flight take (they are in memory).
    func inFlight(_ engine: Engine) -> QueueUsage {
        engine.uploads.keys.reduce(QueueUsage()) { $0 + (sizes[$1] ?? QueueUsage(items: 1)) }
    }

    /// The figures the last image handed on (a recycle), which stand in for the start-up count.
    private var handed: RecycleLine.Figures?

    /// Set before the engine starts in a recycled image: what the last one counted
    /// (`figuresForNextImage`) is taken instead of counting pending/ again.
    public func resume(from figures: RecycleLine.Figures?) { handed = figures }

    /// What this image's sums say the queue takes, for the next image (a recycle, once the
    /// engine finished: nothing in flight); nil while the start-up count is still running.
    public var figuresForNextImage: RecycleLine.Figures? {
        takeCensus()
        guard !counting else { return nil }
        ages.fold(now: engine?.clock.now() ?? Timestamp(millisecondsSinceEpoch: 0))
        return RecycleLine.Figures(usage: (inMemory + outside).clamped, isEstimated: isEstimated, ages: ages)
    }

    public func engineStarted(_ engine: Engine, now: Timestamp) {
        self.engine = engine
        // What start-up told before now is in the engine's items: counted from them alone.
        (sizes, inMemory, outside, isEstimated) = ([:], QueueUsage(), QueueUsage(), false)
        ages.removeAll()
        for (id, lifecycle) in engine.items {
            add(id, at: lifecycle.location)
            joinAges(id)
        }
        if let figures = handed {
            // A recycled image: the last image's sums cover the queue, those in memory now too.
            handed = nil
            outside = (figures.usage - inMemory).clamped
            isEstimated = figures.isEstimated
            ages = figures.ages
            return
        }
        guard engine.queuedOutsideMemory > 0 || !engine.backlog.isEmpty else { return }
        // Everything queued beyond memory, counted once off the engine's thread: by the start's
        // pass, which lists pending/ anyway, when it counts what this leaves out (`pendingCensus`).
        counting = true
        let excluded = Set(engine.items.keys)
        if engine.pendingCensusExcluding == excluded {
            awaitsPassCensus = excluded
            return
        }
        countPending(engine, excluding: excluded)
    }

    /// Counts pending/ beyond memory (`excluding`: the items in memory when the count began) in a
    /// listing of its own, on the pass worker.
    private func countPending(_ engine: Engine, excluding excluded: Set<ItemID>) {
        let (reading, inbox, events) = (spool.reading(.pending), census, engine.events)
        let measure = FolderCensus.Measure.sample(budget: startSampleBudget)
        engine.runPass {
            let result = Result { try reading.census(measure: measure, excluding: excluded, keepsCreationMinutes: true) }
            inbox.result.withLock { $0 = result }
            events.wake()
        }
        takeCensus()
    }

    /// The start's pass counts pending/ for this (`EngineObserver.pendingCensus`), unless the
    /// last image handed its figures on.
    public var pendingCensus: FolderCensus.Measure? {
        handed == nil ? .sample(budget: startSampleBudget) : nil
    }

    /// While this waits for the start's pass to count pending/: the ids it leaves out.
    private var awaitsPassCensus: Set<ItemID>?

    /// The start's pass counted pending/; one that failed (its runs could not be written: a
    /// full disk) is counted in a listing of its own instead, with the same items left out.
    public func pendingCounted(_ result: Result<FolderCensus, any Error>) {
        guard let excluded = awaitsPassCensus else { return }
        awaitsPassCensus = nil
        switch result {
        case .success:
            census.result.withLock { $0 = result }
        case .failure:
            if let engine { countPending(engine, excluding: excluded) }
        }
    }

    /// Adds the start-up count once it is done (on the engine's thread).
    private func takeCensus() {
        guard counting, let result = census.result.withLock({ $0.take() }) else { return }
        counting = false
        switch result {
        case .success(let found):
            outside += QueueUsage(items: found.items, payloadBytes: found.usage.payloadBytes, diskBytes: found.usage.diskBytes)
            isEstimated = found.isEstimated
            ages.merge(found.ages)
        case .failure:
            // Unreadable: the sums cover memory and what joined since; nothing beyond is known.
            break
        }
    }

    public func itemQueued(_ id: ItemID, at location: ItemLocation) {
        guard sizes[id] == nil else { return }
        joinAges(id)
        if engine.map({ $0.items[id] == nil }) ?? false {
            outside += measure(id, at: location)  // it waits beyond memory
        } else {
            add(id, at: location)
        }
    }

    public func itemsCameIntoMemory(_ items: [(ItemID, ItemLocation)]) {
        for (id, location) in items where sizes[id] == nil {
            outside -= add(id, at: location)
        }
        if !counting { outside = outside.clamped }
    }

    public func itemsLeftMemory(_ ids: [ItemID]) {
        for id in ids {
            guard let size = sizes.removeValue(forKey: id) else { continue }
            inMemory -= size
            outside += size
        }
    }

    public func itemLeftQueue(_ id: ItemID) {
        guard let size = sizes.removeValue(forKey: id) else { return }
        inMemory -= size
        if let createdAt = id.createdAt { ages.remove(createdAt) }
    }

    public func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
        if !stillQueued { itemLeftQueue(id) }
    }

    /// Items whose sizes are kept one by one: those in memory, never the queue beyond it.
    var itemsMeasured: Int { sizes.count }

    /// The payload size recorded for an item in memory.
    func size(of id: ItemID) -> Int64? { sizes[id]?.payloadBytes }

    @discardableResult
    private func add(_ id: ItemID, at location: ItemLocation) -> QueueUsage {
        let size = measure(id, at: location)
        sizes[id] = size
        inMemory += size
        return size
    }

    private func joinAges(_ id: ItemID) {
        if let createdAt = id.createdAt { ages.add(createdAt) }
    }

    /// An item's payload and disk: its blob's size, and the blocks of its blob and json (a
    /// direct upload has no json yet).
    private func measure(_ id: ItemID, at location: ItemLocation) -> QueueUsage {
        let blob = try? spool.status(of: ItemFileName(id: id, attempt: location.attempt, kind: .blob), at: location)
        let json = try? spool.status(of: ItemFileName(id: id, attempt: location.attempt, kind: .json), at: location)
        return QueueUsage(
            items: 1, payloadBytes: blob?.size ?? 0, diskBytes: (blob?.allocatedBytes ?? 0) + (json?.allocatedBytes ?? 0))
    }

    /// Brings the table in line with the engine's items in memory, as a safety net should an item
    /// join or leave without an event; and once nothing waits beyond memory, starts the sums
    /// beyond it (and the ages) again from memory alone.
    func reconcile(_ engine: Engine) {
        takeCensus()
        if sizes.count != engine.items.count || inMemory.payloadBytes < 0 {
            for (id, size) in sizes where engine.items[id] == nil {
                sizes[id] = nil
                inMemory -= size
            }
            for (id, lifecycle) in engine.items where sizes[id] == nil { add(id, at: lifecycle.location) }
        }
        if !counting, engine.queuedOutsideMemory == 0, engine.backlog.isEmpty {
            outside = QueueUsage()
            isEstimated = false
            if ages.total != engine.items.count {
                ages.removeAll()
                for id in engine.items.keys { joinAges(id) }
            }
        }
    }
}

/// The start-up count's result, posted from its thread.
private final class CensusInbox: Sendable {
    let result = Mutex<Result<FolderCensus, any Error>?>(nil)
}
