import SpoolCore
import SpoolSystem

/// The daemon's event source: an inotify descriptor and the completion inbox's wake-up pipe,
/// waited on together in `poll(2)` (the engine's only blocking point).
public final class SystemEventSource: EngineEventSource {
    private let watcher: InotifyWatcher
    private let inbox: CompletionInbox

    public init() throws {
        watcher = try InotifyWatcher()
        inbox = try CompletionInbox()
    }

    public func watch(_ directory: FileDescriptor, label: String, mask: UInt32) throws -> Int32 {
        try watcher.watch(directory, label: label, mask: mask)
    }

    public func unwatch(_ watch: Int32) { watcher.unwatch(watch) }

    public func post(_ id: ItemID, _ outcome: UploadOutcome) { inbox.post(id, outcome) }

    public func requestStop() { inbox.requestStop() }

    public func takeEvents() -> EngineEvents {
        EngineEvents(watcher: watcher.readEvents(), completions: inbox.takeAll(), stopLevel: inbox.stopLevel)
    }

    public func wait(timeoutMilliseconds: Int32) {
        _ = Poller.wait(for: [watcher.fd, inbox.wakeup.readFD], timeoutMilliseconds: timeoutMilliseconds)
        inbox.wakeup.drain()
    }
}
