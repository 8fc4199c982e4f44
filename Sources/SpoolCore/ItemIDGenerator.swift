/// Makes new `ItemID`s that sort in creation order.
///
/// Within one millisecond a counter keeps the order; a random part keeps ids from two processes
/// (a daemon and an `enqueue`) apart. Time and randomness are injected to keep the core pure.
public struct ItemIDGenerator: Sendable {
    private var lastMillisecond: Int64 = .min
    private var counter: UInt32 = 0
    private let processTag: String

    /// - Parameter processTag: random hex, fixed for the generator's lifetime (8 characters are used).
    public init(processTag: UInt64) {
        let hex = String(processTag & 0xffff_ffff, radix: 16)
        self.processTag = String(repeating: "0", count: 8 - hex.count) + hex
    }

    public mutating func next(at now: Timestamp, originalName: String?) -> ItemID {
        var ms = now.millisecondsSinceEpoch
        if ms <= lastMillisecond {
            if counter == 9_999 { ms = lastMillisecond + 1; counter = 0 }  // borrow the next millisecond
            else { ms = lastMillisecond; counter += 1 }
        } else {
            counter = 0
        }
        lastMillisecond = ms
        let count = String(counter)
        var raw = Timestamp(millisecondsSinceEpoch: ms).compact + "-"
            + String(repeating: "0", count: 4 - count.count) + count + "-" + processTag
        if let name = originalName {
            let hint = ItemID.sanitizedHint(name)
            if !hint.isEmpty { raw += "-" + hint }
        }
        guard let id = ItemID(raw) else { preconditionFailure("generated id \(raw) is not a valid ItemID") }
        return id
    }
}
