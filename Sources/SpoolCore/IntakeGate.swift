/// Whether the daemon takes files in from `incoming/` now: paused while the spool's file system
/// is full, so uploads (which free space) keep going and the files wait where they are.
///
/// A pure state machine: the engine reports what happened and asks when to try again. While
/// paused it tries on a timer and whenever an upload finished (its files leave the spool).
public struct IntakeGate: Equatable, Sendable {
    /// How long a paused intake waits before it tries again on its own.
    public static let retrySeconds = 5.0

    private enum State: Equatable, Sendable {
        case open
        /// `nextTry` nil: as soon as the engine looks (space was freed).
        case paused(since: Timestamp, nextTry: Timestamp?)
    }

    private var state = State.open

    public init() {}

    /// When the pause began, or nil while intake runs.
    public var pausedSince: Timestamp? {
        if case .paused(let since, _) = state { return since }
        return nil
    }

    /// When a paused intake next tries on its own (for the loop's timeout); nil while open.
    public var nextTry: Timestamp? {
        if case .paused(_, let next) = state { return next }
        return nil
    }

    /// Whether the engine may try to take files in (or restore the reserve) now.
    public func mayTry(now: Timestamp) -> Bool {
        switch state {
        case .open: true
        case .paused(_, let next): next.map { $0 <= now } ?? true
        }
    }

    /// The disk was full. Returns true when this starts a pause (say so once).
    public mutating func foundNoRoom(now: Timestamp) -> Bool {
        let next = now.adding(seconds: Self.retrySeconds)
        switch state {
        case .open:
            state = .paused(since: now, nextTry: next)
            return true
        case .paused(let since, _):
            state = .paused(since: since, nextTry: next)
            return false
        }
    }

    /// An upload finished and its files leave the spool: a paused intake tries again at once.
    public mutating func spaceFreed() {
        if case .paused(let since, _) = state { state = .paused(since: since, nextTry: nil) }
    }

    /// Files were taken in. Returns when the pause began if this ends one (say so once).
    public mutating func foundRoom() -> Timestamp? {
        defer { state = .open }
        return pausedSince
    }
}
