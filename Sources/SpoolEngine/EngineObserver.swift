import SpoolCore
import SpoolStore

/// Something that watches the engine work without steering it: metrics, the systemd
/// notifier, the progress line, the hooks. Called on the engine's thread; must not block for long.
/// The engine has one list of them (`Engine.observers`), whatever they watch.
///
/// Every method has an empty default, so an observer implements only what it needs.
public protocol EngineObserver: AnyObject {
    /// Recovery is done, incoming/ was scanned, and the loop is about to start.
    func engineStarted(_ engine: Engine, now: Timestamp)
    /// Once per loop turn, before the engine waits: the latest time the observer wants the next
    /// turn (the engine's poll timeout is shortened to it), or nil for no wish.
    func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp?
    /// The loop ended; the engine is about to return its summary.
    func engineFinished(_ engine: Engine, now: Timestamp)
    /// A new item joined the queue (ingested or adopted) in pending/.
    func itemQueued(_ id: ItemID, at location: ItemLocation)
    /// Items waiting in pending/ beyond memory were read into memory (`Engine+Backlog`).
    func itemsCameIntoMemory(_ items: [(ItemID, ItemLocation)])
    /// Pending items in memory were given back to make room; they wait in pending/, still queued.
    func itemsLeftMemory(_ ids: [ItemID])
    /// An item left the queue without an upload outcome (parked, vanished).
    func itemLeftQueue(_ id: ItemID)
    /// A pending item was deleted to make room (`--when-full drop-oldest`); by default the same
    /// as leaving the queue.
    func itemDropped(_ id: ItemID)
    /// An upload attempt ended; `stillQueued` is false once the item was uploaded or parked.
    func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool)
    /// An item was uploaded or parked in failed/, once the round that recorded it is durable
    /// (`--on-success`, `--on-failure`).
    func itemFinished(_ event: ItemOutcomeEvent)
    /// An S3 multipart upload of the item resumed, started over, checked a completion or owes an abort.
    func multipartNoted(_ id: ItemID, _ note: MultipartNote)
    /// An AbortMultipartUpload the daemon owed was answered (or not), with what follows.
    func abortEnded(_ abort: OwedAbort, _ result: AbortSchedule.Result)
    /// Asked once at start, before the pass over a queue larger than memory begins: whether the
    /// observer wants pending/ counted in that pass's listing (`FolderCensus`, with this measure,
    /// creation minutes kept; the items then in memory, `Engine.pendingCensusExcluding`, left
    /// out). The count comes to `pendingCounted` when the pass ends.
    var pendingCensus: FolderCensus.Measure? { get }
    func pendingCounted(_ result: Result<FolderCensus, any Error>)
}

extension EngineObserver {
    public func engineStarted(_ engine: Engine, now: Timestamp) {}
    public func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp? { nil }
    public func engineFinished(_ engine: Engine, now: Timestamp) {}
    public func itemQueued(_ id: ItemID, at location: ItemLocation) {}
    public func itemsCameIntoMemory(_ items: [(ItemID, ItemLocation)]) {}
    public func itemsLeftMemory(_ ids: [ItemID]) {}
    public func itemLeftQueue(_ id: ItemID) {}
    public func itemDropped(_ id: ItemID) { itemLeftQueue(id) }
    public func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {}
    public func itemFinished(_ event: ItemOutcomeEvent) {}
    public func multipartNoted(_ id: ItemID, _ note: MultipartNote) {}
    public func abortEnded(_ abort: OwedAbort, _ result: AbortSchedule.Result) {}
    public var pendingCensus: FolderCensus.Measure? { nil }
    public func pendingCounted(_ result: Result<FolderCensus, any Error>) {}
}

/// The engine's observers, called in the order they were added.
public final class EngineObservers {
    private var observers: [any EngineObserver] = []

    public init() {}

    public func add(_ observer: any EngineObserver) { observers.append(observer) }

    func engineStarted(_ engine: Engine, now: Timestamp) { for o in observers { o.engineStarted(engine, now: now) } }

    /// The poll timeout shortened to the earliest time an observer asked for.
    func timeout(_ engine: Engine, now: Timestamp, milliseconds: Int32) -> Int32 {
        var result = milliseconds
        for o in observers {
            guard let wake = o.engineWillWait(engine, now: now) else { continue }
            let ms = max(0, wake.millisecondsSinceEpoch - now.millisecondsSinceEpoch)
            result = min(result, Int32(clamping: ms))
        }
        return result
    }

    func engineFinished(_ engine: Engine, now: Timestamp) { for o in observers { o.engineFinished(engine, now: now) } }
    func itemQueued(_ id: ItemID, at location: ItemLocation) { for o in observers { o.itemQueued(id, at: location) } }
    func itemLeftQueue(_ id: ItemID) { for o in observers { o.itemLeftQueue(id) } }
    func itemsCameIntoMemory(_ items: [(ItemID, ItemLocation)]) { for o in observers { o.itemsCameIntoMemory(items) } }
    func itemsLeftMemory(_ ids: [ItemID]) { for o in observers { o.itemsLeftMemory(ids) } }
    func itemDropped(_ id: ItemID) { for o in observers { o.itemDropped(id) } }
    func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
        for o in observers { o.uploadFinished(id, outcome: outcome, size: size, seconds: seconds, stillQueued: stillQueued) }
    }
    func itemFinished(_ event: ItemOutcomeEvent) { for o in observers { o.itemFinished(event) } }
    func multipartNoted(_ id: ItemID, _ note: MultipartNote) { for o in observers { o.multipartNoted(id, note) } }
    func abortEnded(_ abort: OwedAbort, _ result: AbortSchedule.Result) { for o in observers { o.abortEnded(abort, result) } }
    /// The measure the first observer that wants a census of pending/ asks for (one census serves
    /// them all; each that did not ask ignores it).
    var pendingCensus: FolderCensus.Measure? { observers.lazy.compactMap(\.pendingCensus).first }
    func pendingCounted(_ result: Result<FolderCensus, any Error>) {
        for o in observers { o.pendingCounted(result) }
    }
}
