/// `--max-spool-size` and `--max-items`: how much disk the queue (pending and in flight) may take
/// and how many items it may hold, and what happens to a new file when either is reached.
///
/// The size counts what the items take on disk (the allocated blocks of both files of each,
/// `QueueUsage.diskBytes`), the items count their inodes (two each). A file is admitted while
/// the queue is below both limits, so the queue is never more than one item over either, and a
/// single file larger than the size limit still gets in once the queue is empty.
public struct SpoolSizeLimit: Equatable, Sendable {
    public enum WhenFull: String, Sendable, CaseIterable {
        /// New files wait (in incoming/, untouched; `enqueue` refuses) until uploads make room.
        case block
        /// The oldest pending items are deleted to make room: the operator chose to lose them.
        case dropOldest = "drop-oldest"
    }

    /// The most disk the queue may take, in bytes (`--max-spool-size`); nil: no limit.
    public var bytes: Int64?
    /// The most items the queue may hold (`--max-items`); nil: no limit.
    public var items: Int?
    public var whenFull: WhenFull

    public init(bytes: Int64? = nil, items: Int? = nil, whenFull: WhenFull = .block) {
        precondition(bytes != nil || items != nil, "a limit limits something")
        (self.bytes, self.items, self.whenFull) = (bytes, items, whenFull)
    }

    /// Whether one more item may join a queue that holds `queued`.
    public func admits(_ queued: QueueUsage) -> Bool {
        (bytes.map { queued.diskBytes < $0 } ?? true) && (items.map { queued.items < $0 } ?? true)
    }

    /// `drop-oldest`: whether another pending item must go before a new one joins: the same rule
    /// as admission, so a queue kept full by drops sits between the limit and one item over it.
    public func mustDrop(_ queued: QueueUsage) -> Bool {
        whenFull == .dropOldest && queued.items > 0 && !admits(queued)
    }

    /// Full: nothing more may join until something leaves.
    public func isFull(_ queued: QueueUsage) -> Bool { !admits(queued) }

    /// Has room again: below `share` of every limit (so a queue hovering at a limit is not said
    /// to be full and free again at every item).
    public func hasRoom(_ queued: QueueUsage, share: Double) -> Bool {
        (bytes.map { Double(queued.diskBytes) < Double($0) * share } ?? true)
            && (items.map { Double(queued.items) < Double($0) * share } ?? true)
    }

    /// The limits reached by `queued`, as the options that set them: `--max-spool-size`,
    /// `--max-items`, or both.
    public func reached(_ queued: QueueUsage) -> [String] {
        var names: [String] = []
        if let bytes, queued.diskBytes >= bytes { names.append("--max-spool-size") }
        if let items, queued.items >= items { names.append("--max-items") }
        return names
    }
}
