import SpoolCore
import SpoolStore

/// What one turn of the engine loop records on disk: finished uploads and new claims, committed
/// together so that each round costs one index fsync whatever its size (group commit), made
/// away from the loop (`Engine+Durability`).
struct Round {
    /// A claim, with what its upload needs once the claim is durable.
    struct Claim {
        var transition: SpoolTransition
        var metadata: ItemMetadata
        var isProbe: Bool
    }

    var claims: [Claim] = []
    /// Finished uploads: removed, requeued or parked.
    var finished: [SpoolTransition] = []
    /// Items in `finished`: they are claimed again only once their files have moved.
    var finishedIDs = Set<ItemID>()
    /// Items in `finished` that stay queued (requeued, handed back): they join the due queue
    /// once the round is durable.
    var requeued: [DueQueue.Entry] = []
    /// Log lines for finished uploads, written once the round is durable.
    var messages: [(level: EventLog.Level, text: String)] = []
    /// Items uploaded or parked, told to the engine's observers (`itemFinished`: hooks) once the round is durable.
    var outcomes: [ItemOutcomeEvent] = []
    /// Multipart items that succeeded or failed in this round: their part logs go once the
    /// round is committed (a failed one's once its upload's end is owed, `owedAborts`).
    var finishedMultipart: [(id: ItemID, failed: Bool)] = []
    /// The ends owed for the uploads of the multipart items parked in failed/ by this round:
    /// written as the round's commit begins, synced first among its syncs (`Engine.oweAborts`).
    var owedAborts: [OwedAbort] = []
    /// Direct uploads that succeeded (`Spool.takeForDirectUpload`): nothing was recorded for
    /// them, so nothing is committed; their blobs are removed.
    var directSuccesses: [ItemID] = []

    /// An upload whose progress the spool could not write (`Engine+Records`): left
    /// unacknowledged in inflight/, and the engine stops once the rest of the round is committed
    /// (a failed write or fsync is never retried and trusted).
    var recordFailure: (id: ItemID, reason: String)?

    var isEmpty: Bool { claims.isEmpty && finished.isEmpty }

    mutating func finish(_ transition: SpoolTransition) {
        finished.append(transition)
        finishedIDs.insert(transition.record.id)
    }

    /// Claims first: `Engine.commitRound` moves their files and starts their uploads before it
    /// touches the finished items' files (`Spool.beginCommit`).
    var transitions: [SpoolTransition] { claims.map(\.transition) + finished }
}
