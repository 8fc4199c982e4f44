/// `--max-spool-size`: how many payload bytes may be queued (pending and in flight), and what
/// happens to a new file when they are reached.
///
/// A file is admitted while the queue is below the limit, so the queue is never more than one
/// item over it, and a single file larger than the limit still gets in once the queue is empty.
public struct SpoolSizeLimit: Equatable, Sendable {
    public enum WhenFull: String, Sendable, CaseIterable {
        /// New files wait (in incoming/, untouched; `enqueue` refuses) until uploads make room.
        case block
        /// The oldest pending items are deleted to make room: the operator chose to lose them.
        case dropOldest = "drop-oldest"
    }

    public var bytes: Int64
    public var whenFull: WhenFull

    public init(bytes: Int64, whenFull: WhenFull = .block) {
        self.bytes = bytes
        self.whenFull = whenFull
    }

    /// Whether one more item may join a queue holding `queued` bytes.
    public func admits(queued: Int64) -> Bool { queued < bytes }

    /// `drop-oldest`: whether another pending item must go before a new one joins `queued` bytes:
    /// the same rule as admission, so a queue kept full by drops sits between the limit and one
    /// item over it.
    public func mustDrop(queued: Int64) -> Bool {
        whenFull == .dropOldest && queued > 0 && !admits(queued: queued)
    }

    /// Full: nothing more may join until something leaves.
    public func isFull(queued: Int64) -> Bool { !admits(queued: queued) }
}
