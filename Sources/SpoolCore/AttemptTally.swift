/// How the attempts an item has started (the `N` of its `.aN`) ended: *answered* (an outcome was
/// recorded: a 2xx, a retryable or a final failure, a network error) or *interrupted* (spoold
/// stopped mid-upload, by a crash, a kill or a trap, so no outcome was recorded).
///
/// Derived from durable state alone, so no extra write is needed and a crash cannot lose it: `N`
/// is counted on disk before each request, and an answered outcome enters the
/// json's history in the same commit that moves the pair, so a started attempt without an answered
/// entry was interrupted. Recovery adds an `interrupted` entry for it; the tally does not depend on
/// that entry having been written.
public struct AttemptTally: Equatable, Sendable {
    public var answered: Int
    public var interrupted: Int

    public init(answered: Int, interrupted: Int) {
        self.answered = answered
        self.interrupted = interrupted
    }

    /// Every attempt started and ended, `answered + interrupted`.
    public var ended: Int { answered + interrupted }

    /// The tally of an item's `ended` attempts: `N` for an item in pending/ or failed/, `N - 1`
    /// (the attempts before the one in progress) for an item in inflight/.
    ///
    /// Only the history's last `ended` entries count: `spoold retry` starts `N` again at 0 but keeps
    /// the older entries, and each attempt since leaves at most one entry (a handed-back attempt
    /// leaves none and is not counted in `N` either). An attempt whose entry is missing (a json
    /// recreated by recovery) counts as interrupted.
    public init(ended: Int, history: [AttemptRecord]) {
        let ended = max(0, ended)
        let answered = history.suffix(ended).reduce(0) { $0 + ($1.isAnswered ? 1 : 0) }
        self.init(answered: answered, interrupted: ended - answered)
    }

    /// After one more attempt that ended with an outcome.
    public func addingAnswered() -> AttemptTally { AttemptTally(answered: answered + 1, interrupted: interrupted) }

    /// After one more attempt that was interrupted.
    public func addingInterrupted() -> AttemptTally { AttemptTally(answered: answered, interrupted: interrupted + 1) }
}
