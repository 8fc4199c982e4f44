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
        /// A snapshot of where an item is, as a compacted index may hold it. spoold's own
        /// compaction writes none (nothing is in progress once folders are synced); read as-is.
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
        let bytes = Array(payload.utf8)
        guard let record = bytes.withUnsafeBufferPointer({ IndexRecord(payloadBytes: $0) }) else { return nil }
        self = record
    }

    /// Parses the payload bytes strictly: exactly the text `description` would print (single
    /// spaces, known names, attempt digits without leading zeros), so a parsed record is
    /// canonical without printing it again. Runs for every record at start-up.
    public init?(payloadBytes b: UnsafeBufferPointer<UInt8>) {
        // Four tokens separated by single spaces.
        var cuts = (0, 0, 0)
        var found = 0
        for i in 0..<b.count where b[i] == 0x20 {
            switch found {
            case 0: cuts.0 = i
            case 1: cuts.1 = i
            case 2: cuts.2 = i
            default: return nil
            }
            found += 1
        }
        guard found == 3, cuts.0 > 0, cuts.1 > cuts.0 + 1, cuts.2 > cuts.1 + 1, cuts.2 + 1 < b.count,
              let op = IndexRecord.operation(b, 0..<cuts.0),
              let id = ItemID(String(decoding: UnsafeBufferPointer(rebasing: b[(cuts.0 + 1)..<cuts.1]), as: UTF8.self)),
              let from = IndexRecord.location(b, (cuts.1 + 1)..<cuts.2),
              let to = IndexRecord.location(b, (cuts.2 + 1)..<b.count)
        else { return nil }
        self.init(op, id, from: from, to: to)
    }

    private static let operationNames: [(Operation, [UInt8])] = Operation.allCases.map { ($0, Array($0.rawValue.utf8)) }
    private static let stateNames: [(ItemState, [UInt8])] = ItemState.allCases.map { ($0, Array($0.rawValue.utf8)) }

    private static func equal(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ name: [UInt8]) -> Bool {
        guard range.count == name.count else { return false }
        var j = 0
        for i in range {
            if b[i] != name[j] { return false }
            j += 1
        }
        return true
    }

    private static func operation(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Operation? {
        for (op, name) in operationNames where equal(b, range, name) { return op }
        return nil
    }

    /// `-` (nowhere) → `.some(nil)`; `<state>.a<N>` → the location; anything else → nil.
    private static func location(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> ItemLocation?? {
        if range.count == 1, b[range.lowerBound] == UInt8(ascii: "-") { return .some(nil) }
        guard let dot = b[range].firstIndex(of: UInt8(ascii: ".")),
              let state = stateNames.first(where: { equal(b, range.lowerBound..<dot, $0.1) })?.0,
              dot + 2 < range.upperBound, b[dot + 1] == UInt8(ascii: "a")
        else { return nil }
        let digits = (dot + 2)..<range.upperBound
        guard digits.count <= 4, digits.count == 1 || b[digits.lowerBound] != UInt8(ascii: "0") else { return nil }
        var attempt = 0
        for i in digits {
            guard b[i] >= 48, b[i] <= 57 else { return nil }
            attempt = attempt * 10 + Int(b[i] - 48)
        }
        return .some(ItemLocation(state, attempt: attempt))
    }
}

extension IndexRecord.Operation {
    /// Moves whose synced index record alone makes them durable: recovery completes them from the
    /// index wherever the files are found, so their renames need no folder fsync (group commit).
    public var isCompletedFromIndex: Bool { self == .claim || self == .done }
}
