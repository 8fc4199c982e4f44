/// How many queued items were made in each minute: the queue's shape by age (`QueueAgeShape`)
/// kept as items join and leave, so a daemon can say it at any time without reading pending/.
///
/// Bounded by time, not by the queue: minutes older than the last bucket's lower bound
/// (2^14 minutes, about 11 days) share one count (`fold`), so at most one count per minute of
/// those 11 days is kept, whatever the queue holds. Ages are to the minute: the items of a
/// minute are counted at its middle.
public struct CreationMinutes: Equatable, Sendable {
    private var counts: [Int64: Int] = [:]
    /// Items made before `cutoff` (a minute since the epoch; only ever moves forward).
    private var older = 0
    private var cutoff = Int64.min

    public init() {}

    /// Items counted.
    public private(set) var total = 0

    /// Minutes kept one by one (at most about 2^14 once folded, plus any ahead of the clock).
    public var minutesKept: Int { counts.count }

    private static func minute(_ time: Timestamp) -> Int64 {
        let ms = time.millisecondsSinceEpoch
        return ms >= 0 ? ms / 60_000 : (ms - 59_999) / 60_000
    }

    public mutating func add(_ createdAt: Timestamp, count: Int = 1) {
        let minute = CreationMinutes.minute(createdAt)
        if minute < cutoff { older += count } else { counts[minute, default: 0] += count }
        total += count
    }

    /// An item left; one never added is ignored (its minute is empty).
    public mutating func remove(_ createdAt: Timestamp) {
        let minute = CreationMinutes.minute(createdAt)
        if minute < cutoff {
            guard older > 0 else { return }
            older -= 1
        } else {
            guard let count = counts[minute] else { return }
            if count <= 1 { counts[minute] = nil } else { counts[minute] = count - 1 }
        }
        total -= 1
    }

    /// Adds everything `other` counts (a census of items read in bulk).
    public mutating func merge(_ other: CreationMinutes) {
        for (minute, count) in other.counts {
            if minute < cutoff { older += count } else { counts[minute, default: 0] += count }
        }
        if other.older > 0 {
            // Made before the other's cutoff: before ours too once folded at the same time.
            older += other.older
        }
        total += other.total
        fold(cutoffMinute: other.cutoff)
    }

    /// Merges the minutes older than the last bucket's lower bound at `now` into one count.
    public mutating func fold(now: Timestamp) {
        let (lower, _) = QueueAgeShape.bounds(ofBucket: QueueAgeShape.bucketCount - 1)
        fold(cutoffMinute: CreationMinutes.minute(now) - Int64(lower) - 1)
    }

    private mutating func fold(cutoffMinute: Int64) {
        // No minute is kept below the cutoff: only a later one can fold anything.
        guard cutoffMinute > cutoff else { return }
        cutoff = cutoffMinute
        for (minute, count) in counts where minute < cutoff {
            older += count
            counts[minute] = nil
        }
    }

    /// The shape at `now`: each minute's items at the minute's middle.
    public func shape(now: Timestamp) -> QueueAgeShape {
        var shape = QueueAgeShape()
        for (minute, count) in counts {
            let middle = Timestamp(millisecondsSinceEpoch: minute * 60_000 + 30_000)
            shape.add(ageSeconds: middle.seconds(until: now), count: count)
        }
        if older > 0 { shape.add(ageSeconds: .infinity, count: older) }
        return shape
    }

    /// When the shape next changes with no item joining or leaving: the first time a minute's
    /// middle crosses a bucket's upper bound; nil when none can (none kept, or all in the last).
    public func nextChange(after now: Timestamp) -> Timestamp? {
        var next: Int64?
        for minute in counts.keys {
            let middle = minute * 60_000 + 30_000
            let age = now.millisecondsSinceEpoch - middle
            var bound: Int64 = 60_000
            for _ in 0..<(QueueAgeShape.bucketCount - 1) {
                if age < bound {
                    let at = middle + bound
                    if next.map({ at < $0 }) ?? true { next = at }
                    break
                }
                bound *= 2
            }
        }
        return next.map { Timestamp(millisecondsSinceEpoch: $0) }
    }

    /// The counts as text lines, for a recycle's hand-off (`RecycleLine`): `older <cutoff> <n>`
    /// (the cutoff `-` before any fold), then `minute <minute> <n>` for each minute kept.
    public var lines: [String] {
        ["older \(cutoff == .min ? "-" : String(cutoff)) \(older)"]
            + counts.sorted { $0.key < $1.key }.map { "minute \($0.key) \($0.value)" }
    }

    /// The counts `lines` wrote; nil unless every line is one of those, counts positive, each
    /// minute once and none below the cutoff.
    public init?(lines: some Collection<Substring>) {
        guard let first = lines.first else { return nil }
        let head = first.split(separator: " ")
        guard head.count == 3, head[0] == "older", let older = Int(head[2]), older >= 0 else { return nil }
        if head[1] != "-" {
            guard let cutoff = Int64(head[1]) else { return nil }
            self.cutoff = cutoff
        }
        (self.older, total) = (older, older)
        for line in lines.dropFirst() {
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "minute", let minute = Int64(parts[1]), let count = Int(parts[2]), count > 0,
                  minute >= cutoff, counts[minute] == nil
            else { return nil }
            counts[minute] = count
            total += count
        }
    }

    /// Forgets everything (the queue emptied, or is counted again).
    public mutating func removeAll() {
        counts.removeAll()
        (older, total) = (0, 0)
    }
}
