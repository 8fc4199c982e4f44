import SpoolCore
import SpoolStore

/// What one turn of the engine loop records on disk: finished uploads and new claims, committed
/// together so that each round costs one index fsync whatever its size (group commit).
struct Round {
    /// A claim in `transitions`, with what its upload needs once the claim is durable.
    struct Claim {
        var id: ItemID
        var metadata: ItemMetadata
        /// Index of its transition in `transitions`.
        var transition: Int
        var isProbe: Bool
    }

    var transitions: [SpoolTransition] = []
    var claims: [Claim] = []
    /// Log lines for finished uploads, written once the round is durable.
    var messages: [String] = []

    func touches(_ id: ItemID) -> Bool { transitions.contains { $0.record.id == id } }
}
