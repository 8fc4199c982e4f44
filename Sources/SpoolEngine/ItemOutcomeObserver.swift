/// Hears of every item the engine uploads or parks in failed/, after the round that recorded it
/// is committed. Called on the engine's thread: it must return at once (queue, never run).
public protocol ItemOutcomeObserver: Sendable {
    func itemFinished(_ event: ItemOutcomeEvent)
}
