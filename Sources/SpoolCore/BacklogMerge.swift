/// Where sorted backlog entries come from, one at a time (a run file of a pass, in a test an array).
public protocol BacklogSource {
    /// The next entry, in order; nil at the end.
    mutating func next() throws -> BacklogEntry?
}

/// The k-way merge of sorted runs into one ordered stream: the heads of the runs in a small
/// min-heap, so each entry costs O(log runs) and the memory is one entry per run, whatever the
/// runs hold. (A pass over pending/ sorts what it reads in chunks and writes each chunk as a
/// run; this reads them back as one queue.)
public struct BacklogMerge<Source: BacklogSource> {
    private var sources: [Source]
    /// (entry, index of its source), a min-heap by entry.
    private var heads: [(BacklogEntry, Int)] = []

    public init(_ sources: [Source]) throws {
        self.sources = sources
        for i in self.sources.indices {
            if let entry = try self.sources[i].next() { push((entry, i)) }
        }
    }

    /// The next entry without taking it.
    public var peek: BacklogEntry? { heads.first?.0 }

    public var isEmpty: Bool { heads.isEmpty }

    /// The sources whose next entry the merge holds (read from them, not yet returned), each
    /// with that entry: what a reader that takes over must read again. Used-up sources are left out.
    public var held: [(source: Source, entry: BacklogEntry)] { heads.map { (sources[$0.1], $0.0) } }

    public mutating func next() throws -> BacklogEntry? {
        guard let (entry, source) = heads.first else { return nil }
        if let following = try sources[source].next() {
            heads[0] = (following, source)
            siftDown(0)
        } else {
            heads.swapAt(0, heads.count - 1)
            heads.removeLast()
            if !heads.isEmpty { siftDown(0) }
        }
        return entry
    }

    private mutating func push(_ head: (BacklogEntry, Int)) {
        heads.append(head)
        var child = heads.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heads[child].0 < heads[parent].0 else { break }
            heads.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heads.count, heads[left].0 < heads[smallest].0 { smallest = left }
            if right < heads.count, heads[right].0 < heads[smallest].0 { smallest = right }
            if smallest == parent { return }
            heads.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// An array as a source (tests, and a pass small enough to stay in memory).
public struct BacklogArraySource: BacklogSource {
    private var entries: [BacklogEntry]
    private var position = 0

    /// `entries` must be sorted.
    public init(_ entries: [BacklogEntry]) { self.entries = entries }

    public mutating func next() -> BacklogEntry? {
        guard position < entries.count else { return nil }
        defer { position += 1 }
        return entries[position]
    }
}
