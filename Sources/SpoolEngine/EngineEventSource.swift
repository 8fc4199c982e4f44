import SpoolCore
import SpoolSystem

/// Where the engine's events come from and how its driver waits for them: the kernel (inotify
/// and `poll(2)`, `SystemEventSource`) in the daemon, a script in tests (`EmbeddedEngine`).
///
/// `post` and `requestStop` are called from any thread (URLSession's, a signal queue); the rest
/// on the engine's thread only.
public protocol EngineEventSource: AnyObject, Sendable {
    /// Watches a folder of the spool for `mask` (`InotifyWatcher` bits); returns its watch number.
    func watch(_ directory: FileDescriptor, label: String, mask: UInt32) throws -> Int32
    /// Drops a watch; one already gone is fine.
    func unwatch(_ watch: Int32)
    /// An upload ended: its outcome joins the next step's events.
    func post(_ id: ItemID, _ outcome: UploadOutcome)
    /// The transport told something besides an outcome: joins the next step's events.
    func report(_ report: TransportReport)
    /// A stop request: raises `EngineEvents.stopLevel`.
    func requestStop()
    /// Wakes the loop for work that ended on another thread (a pass over pending/).
    func wake()
    /// Everything that arrived since the last call, without waiting.
    func takeEvents() -> EngineEvents
    /// Blocks until an event may have arrived or `timeoutMilliseconds` pass.
    func wait(timeoutMilliseconds: Int32)
}
