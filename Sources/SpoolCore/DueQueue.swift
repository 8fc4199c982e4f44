/// Pending items ordered by when they may next be tried (then by id, i.e. enqueue order).
///
/// A binary min-heap: 100,000 queued items cost O(log n) per push and pop, never a rescan.
/// Entries are not removed when an item changes; the engine skips stale ones as it pops.
public struct DueQueue: Sendable {
    public struct Entry: Equatable, Sendable {
        public var notBefore: Timestamp
        public var id: ItemID
        public init(notBefore: Timestamp, id: ItemID) {
            self.notBefore = notBefore
            self.id = id
        }
        fileprivate static func < (a: Entry, b: Entry) -> Bool {
            a.notBefore != b.notBefore ? a.notBefore < b.notBefore : a.id < b.id
        }
    }

    private var heap: [Entry] = []

    public init() {}

    public var count: Int { heap.count }
    public var isEmpty: Bool { heap.isEmpty }
    public var first: Entry? { heap.first }

    /// How many entries are due at `now`, counting at most `limit`: only due entries and their
    /// children are visited (a child is never due before its parent), so it costs O(limit).
    public func countDue(at now: Timestamp, upTo limit: Int) -> Int {
        var count = 0
        var next = [0]
        while count < limit, let i = next.popLast() {
            guard i < heap.count, heap[i].notBefore <= now else { continue }
            count += 1
            next.append(2 * i + 1)
            next.append(2 * i + 2)
        }
        return count
    }

    public mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child] < heap[parent] else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    public mutating func popFirst() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left] < heap[smallest] { smallest = left }
            if right < heap.count, heap[right] < heap[smallest] { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}
