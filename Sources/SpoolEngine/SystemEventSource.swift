import SpoolCore
import SpoolSystem

/// The daemon's event source: an inotify descriptor, the completion inbox's wake-up pipe and the
/// stop signals' signalfd, waited on together in `poll(2)` (the engine's only blocking point).
public final class SystemEventSource: EngineEventSource {
    private let watcher: InotifyWatcher
    private let inbox: CompletionInbox
    /// SIGTERM/SIGINT as a descriptor; each one read is a stop request.
    private let stopSignals: StopSignals?

    /// Whether the inotify instance is the one an earlier image handed on (`adoptingWatcher`).
    public let adoptedWatcher: Bool

    /// `adoptingWatcher`: the inotify descriptor a recycle handed on; a new instance is made when
    /// it is nil or not one.
    public init(stopSignals: StopSignals? = nil, adoptingWatcher handed: Int32? = nil) throws {
        if let handed, let adopted = InotifyWatcher(adopting: handed) {
            (watcher, adoptedWatcher) = (adopted, true)
        } else {
            (watcher, adoptedWatcher) = (try InotifyWatcher(), false)
        }
        inbox = try CompletionInbox()
        self.stopSignals = stopSignals
    }

    /// The inotify descriptor, for a recycle to hand on (kept open across `execve`): the next
    /// image reads the events of the instant between the images from it.
    public var watcherDescriptor: Int32 { watcher.fd }

    public func watch(_ directory: FileDescriptor, label: String, mask: UInt32) throws -> Int32 {
        try watcher.watch(directory, label: label, mask: mask)
    }

    public func unwatch(_ watch: Int32) { watcher.unwatch(watch) }

    public func post(_ id: ItemID, _ outcome: UploadOutcome) { inbox.post(id, outcome) }

    public func report(_ report: TransportReport) { inbox.report(report) }

    public func requestStop() { inbox.requestStop() }

    public func wake() { inbox.wakeup.signal() }

    public func takeEvents() -> EngineEvents {
        if let stopSignals { for _ in 0..<stopSignals.take() { inbox.requestStop() } }
        return EngineEvents(
            watcher: watcher.readEvents(), completions: inbox.takeAll(), stopLevel: inbox.stopLevel, reports: inbox.takeReports())
    }

    public func wait(timeoutMilliseconds: Int32) {
        let descriptors = [watcher.fd, inbox.wakeup.readFD] + (stopSignals.map { [$0.fd] } ?? [])
        _ = Poller.wait(for: descriptors, timeoutMilliseconds: timeoutMilliseconds)
        inbox.wakeup.drain()
    }
}
