import SpoolCore
import SpoolStore

/// The payload bytes in the engine's queue (pending and in flight), kept as a running sum: each
/// item's blob is stat'ed once when it joins, and its size subtracted when it leaves. Shared by
/// the metrics and the spool size limit, so neither rescans pending/.
///
/// Sizes are kept by item for the items in memory (at most `--queue-memory`); those waiting in
/// pending/ beyond memory count in one sum (`outside`), which items leave when they come into
/// memory and join when memory gives them back. At start the whole queue's blobs are summed once.
public final class QueueBytes: EngineObserver {
    private let spool: Spool
    private var sizes: [ItemID: Int64] = [:]
    private var inMemory: Int64 = 0
    private var outside: Int64 = 0
    private weak var engine: Engine?

    public var total: Int64 { inMemory + outside }

    public init(spool: Spool) { self.spool = spool }

    public func engineStarted(_ engine: Engine, now: Timestamp) {
        self.engine = engine
        for (id, lifecycle) in engine.items where sizes[id] == nil { add(id, at: lifecycle.location) }
        // Everything queued beyond memory, read once: the blobs of pending/ not in memory.
        let all = (try? spool.payloadBytes(in: .pending)) ?? 0
        let pendingInMemory = engine.items.reduce(Int64(0)) { $0 + ($1.value.state == .pending ? sizes[$1.key] ?? 0 : 0) }
        outside = max(0, all - pendingInMemory)
    }

    public func itemQueued(_ id: ItemID, at location: ItemLocation) {
        guard sizes[id] == nil else { return }
        if engine.map({ $0.items[id] == nil }) ?? false {
            outside += blobSize(id, at: location)  // it waits beyond memory
        } else {
            add(id, at: location)
        }
    }

    public func itemsCameIntoMemory(_ items: [(ItemID, ItemLocation)]) {
        for (id, location) in items where sizes[id] == nil {
            let size = add(id, at: location)
            outside = max(0, outside - size)
        }
    }

    public func itemsLeftMemory(_ ids: [ItemID]) {
        for id in ids {
            guard let size = sizes.removeValue(forKey: id) else { continue }
            inMemory -= size
            outside += size
        }
    }

    public func itemLeftQueue(_ id: ItemID) {
        if let size = sizes.removeValue(forKey: id) { inMemory -= size }
    }

    public func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
        if !stillQueued { itemLeftQueue(id) }
    }

    /// The size recorded for an item in memory.
    func size(of id: ItemID) -> Int64? { sizes[id] }

    @discardableResult
    private func add(_ id: ItemID, at location: ItemLocation) -> Int64 {
        let size = blobSize(id, at: location)
        sizes[id] = size
        inMemory += size
        return size
    }

    private func blobSize(_ id: ItemID, at location: ItemLocation) -> Int64 {
        (try? spool.status(of: ItemFileName(id: id, attempt: location.attempt, kind: .blob), at: location))?.size ?? 0
    }

    /// Brings the table in line with the engine's items in memory, as a safety net should an item
    /// join or leave without an event.
    func reconcile(_ engine: Engine) {
        guard sizes.count != engine.items.count || inMemory < 0 else { return }
        for (id, size) in sizes where engine.items[id] == nil {
            sizes[id] = nil
            inMemory -= size
        }
        for (id, lifecycle) in engine.items where sizes[id] == nil { add(id, at: lifecycle.location) }
    }
}
