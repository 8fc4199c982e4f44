import SpoolSystem

/// What arrived for the engine since its last step: the input of `Engine.step(now:events:)`.
public struct EngineEvents: Sendable {
    /// inotify events on incoming/, its subfolders, pending/ and the spool root, in order.
    public var watcher: [InotifyWatcher.Event]
    /// Uploads that ended, in the order they were posted.
    public var completions: [CompletionInbox.Completion]
    /// Stop requests so far (not since the last step): 1 stops new work, 2 cancels uploads.
    public var stopLevel: Int

    public init(watcher: [InotifyWatcher.Event] = [], completions: [CompletionInbox.Completion] = [], stopLevel: Int = 0) {
        (self.watcher, self.completions, self.stopLevel) = (watcher, completions, stopLevel)
    }
}
