/// Pending items counted by age in doubling buckets, the way Postfix's `qshape` shows a queue:
/// 0-1 min, 1-2, 2-4, 4-8 ... so a stuck queue (everything old) and a busy one (everything new)
/// look different at a glance.
public struct QueueAgeShape: Equatable, Sendable {
    /// Buckets beyond the first minute double up to 2^14 minutes (about 11 days); older items
    /// share the last, open-ended bucket.
    public static let bucketCount = 16

    /// Items per bucket; index 0 is "under a minute".
    public private(set) var counts: [Int] = Array(repeating: 0, count: bucketCount)

    public init() {}

    /// The bucket an age falls into: 0 under 60 s, then `k` for `[2^(k-1), 2^k)` minutes.
    /// A negative age (a clock that went back, an id from the future) counts as new.
    public static func bucket(forAgeSeconds age: Double) -> Int {
        guard age >= 60 else { return 0 }
        var minutes = age / 60
        var index = 1
        while minutes >= 2 && index < bucketCount - 1 {
            minutes /= 2
            index += 1
        }
        return index
    }

    /// The bucket's bounds in minutes; the last one has no upper bound.
    public static func bounds(ofBucket index: Int) -> (lowerMinutes: Int, upperMinutes: Int?) {
        let lower = index == 0 ? 0 : 1 << (index - 1)
        return (lower, index == bucketCount - 1 ? nil : 1 << index)
    }

    /// `0-1 min`, `2-4 min`, `16384+ min`.
    public static func label(ofBucket index: Int) -> String {
        let (lower, upper) = bounds(ofBucket: index)
        return upper.map { "\(lower)-\($0) min" } ?? "\(lower)+ min"
    }

    public mutating func add(ageSeconds: Double, count: Int = 1) { counts[QueueAgeShape.bucket(forAgeSeconds: ageSeconds)] += count }

    /// Adds every bucket of `other` (a count of another part of the same queue).
    public mutating func merge(_ other: QueueAgeShape) {
        for index in counts.indices { counts[index] += other.counts[index] }
    }

    /// A shape from counts read back (`SPOOL/counts`): missing buckets are empty, extra ones ignored.
    public init(counts: [Int]) {
        for (i, count) in counts.prefix(QueueAgeShape.bucketCount).enumerated() { self.counts[i] = max(0, count) }
    }

    public var total: Int { counts.reduce(0, +) }

    /// The buckets up to the oldest non-empty one (all of them empty-free at the old end), so a
    /// report is as long as the queue is old.
    public var rows: [(bucket: Int, count: Int)] {
        guard let last = counts.lastIndex(where: { $0 > 0 }) else { return [] }
        return (0...last).map { ($0, counts[$0]) }
    }
}
