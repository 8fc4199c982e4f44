/// One entry of the write-ahead index (`SPOOL/index.wal`): an item moved from one place to another.
///
/// Appended and synced *before* the renames it describes, so that a crash between the json and the
/// blob rename can be completed in the recorded direction on start-up. The payload is one line of
/// text, e.g. `claim 20261121T141003123Z-0000-9f3ab2c1-photo.jpg pending.a0 inflight.a1`.
public struct IndexRecord: Equatable, Sendable, CustomStringConvertible {
    public enum Operation: String, Sendable, CaseIterable {
        /// A new item entered `pending/` (from `incoming/` or `enqueue`).
        case add
        /// pending → inflight, attempt counted.
        case claim
        /// inflight → pending after a failed attempt (or start-up recovery).
        case requeue
        /// → failed/.
        case fail
        /// Upload accepted: the item is removed (or moved to done/ with --keep-done).
        case done
        /// failed → pending by an operator, attempt count reset.
        case retry
        /// Deleted for good by an operator.
        case purge
        /// Written by start-up recovery when it repaired an item.
        case repair
        /// Compaction's snapshot of an item that is live in the spool.
        case live
    }

    public var operation: Operation
    public var id: ItemID
    /// Where the item was; `nil` when it did not exist yet.
    public var from: ItemLocation?
    /// Where the item goes; `nil` when it is removed.
    public var to: ItemLocation?

    public init(_ operation: Operation, _ id: ItemID, from: ItemLocation?, to: ItemLocation?) {
        self.operation = operation
        self.id = id
        self.from = from
        self.to = to
    }

    /// The payload text, without framing: `<op> <id> <from|-> <to|->`.
    public var description: String {
        "\(operation.rawValue) \(id.rawValue) \(from?.description ?? "-") \(to?.description ?? "-")"
    }

    /// Parses a payload produced by `description`; `nil` for anything else.
    public init?(payload: Substring) {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 4, let op = Operation(rawValue: String(parts[0])), let id = ItemID(String(parts[1]))
        else { return nil }
        func location(_ s: Substring) -> ItemLocation?? {
            if s == "-" { return .some(nil) }
            guard let l = ItemLocation(parsing: s) else { return nil }
            return .some(l)
        }
        guard let from = location(parts[2]), let to = location(parts[3]) else { return nil }
        self.init(op, id, from: from, to: to)
    }
}

extension IndexRecord.Operation {
    /// Moves whose synced index record alone makes them durable: recovery completes them from the
    /// index wherever the files are found, so their renames need no folder fsync (group commit).
    public var isCompletedFromIndex: Bool { self == .claim || self == .done }
}
