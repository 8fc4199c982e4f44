import SpoolCore
import SpoolStore

/// The payload bytes in the engine's queue (pending and in flight), kept as a running sum: each
/// item's blob is stat'ed once when it joins, and its size subtracted when it leaves. Shared by
/// the metrics and the spool size limit, so neither rescans pending/.
public final class QueueBytes: EngineObserver {
    private let spool: Spool
    private var sizes: [ItemID: Int64] = [:]
    public private(set) var total: Int64 = 0

    public init(spool: Spool) { self.spool = spool }

    public func engineStarted(_ engine: Engine, now: Timestamp) { reconcile(engine) }

    public func itemQueued(_ id: ItemID, at location: ItemLocation) {
        guard sizes[id] == nil else { return }
        let blob = ItemFileName(id: id, attempt: location.attempt, kind: .blob)
        let size = (try? spool.status(of: blob, at: location))?.size ?? 0
        sizes[id] = size
        total += size
    }

    public func itemLeftQueue(_ id: ItemID) {
        if let size = sizes.removeValue(forKey: id) { total -= size }
    }

    public func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
        if !stillQueued { itemLeftQueue(id) }
    }

    /// The size recorded for a queued item.
    func size(of id: ItemID) -> Int64? { sizes[id] }

    /// Brings the table in line with the engine's items: at start (stat'ing every queued blob
    /// once), and as a safety net should an item join or leave without an event.
    func reconcile(_ engine: Engine) {
        guard sizes.count != engine.items.count || total < 0 else { return }
        for (id, size) in sizes where engine.items[id] == nil {
            sizes[id] = nil
            total -= size
        }
        for (id, lifecycle) in engine.items where sizes[id] == nil { itemQueued(id, at: lifecycle.location) }
    }
}
