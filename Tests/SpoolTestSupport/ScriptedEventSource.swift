import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolSystem

/// The engine's events as a test scripts them: watches are only numbered and named (no inotify),
/// an inotify event arrives only when the test feeds one, completions and stop requests wait for
/// the next step. Never blocks: `EmbeddedEngine` moves the clock instead.
public final class ScriptedEventSource: EngineEventSource, @unchecked Sendable {
    private let lock = NSLock()
    private let inbox: CompletionInbox
    /// Label (`SPOOL/incoming`) by watch number; watching a label again returns its number, as
    /// the kernel does for the same inode.
    private var watches: [Int32: String] = [:]
    /// The mask each watch asked for, by watch number.
    private var masks: [Int32: UInt32] = [:]
    private var nextWatch: Int32 = 1
    private var fed: [InotifyWatcher.Event] = []
    private var stopLevelTaken = 0

    public init() throws { inbox = try CompletionInbox() }

    public func watch(_ directory: FileDescriptor, label: String, mask: UInt32) throws -> Int32 {
        lock.withLock {
            if let known = watches.first(where: { $0.value == label })?.key { return known }
            defer { nextWatch += 1 }
            watches[nextWatch] = label
            masks[nextWatch] = mask
            return nextWatch
        }
    }

    public func unwatch(_ watch: Int32) { lock.withLock { (watches[watch], masks[watch]) = (nil, nil) } }

    /// The mask the watch on `folder` (the end of its label) asked for; nil when none is set.
    public func mask(of folder: String) -> UInt32? {
        lock.withLock { watches.first(where: { $0.value.hasSuffix("/" + folder) }).flatMap { masks[$0.key] } }
    }

    public func post(_ id: ItemID, _ outcome: UploadOutcome) { inbox.post(id, outcome) }

    public func report(_ report: TransportReport) { inbox.report(report) }

    public func requestStop() { inbox.requestStop() }

    public func wake() { lock.withLock { woken = true } }
    private var woken = false

    public func takeEvents() -> EngineEvents {
        let watcher = lock.withLock {
            defer { fed.removeAll() }
            return fed
        }
        let stopLevel = inbox.stopLevel
        lock.withLock {
            stopLevelTaken = stopLevel
            woken = false
        }
        return EngineEvents(watcher: watcher, completions: inbox.takeAll(), stopLevel: stopLevel, reports: inbox.takeReports())
    }

    public func wait(timeoutMilliseconds: Int32) {}

    /// Something arrived that a `poll(2)` would wake for.
    public var hasEvents: Bool {
        inbox.hasCompletions || lock.withLock { !fed.isEmpty || woken || stopLevelTaken != inbox.stopLevel }
    }

    /// Feeds an inotify event for `name` in the watched folder whose label ends with `/folder`
    /// (`incoming`, `pending`).
    public func feed(_ mask: UInt32, name: String, in folder: String = "incoming") {
        lock.withLock {
            guard let watch = watches.first(where: { $0.value.hasSuffix("/" + folder) })?.key else {
                preconditionFailure("no watch on \(folder)")
            }
            fed.append(InotifyWatcher.Event(watch: watch, name: name, mask: mask))
        }
    }

    /// Feeds the kernel's "events were dropped" (`IN_Q_OVERFLOW`, on no watch).
    public func feedOverflow() {
        lock.withLock { fed.append(InotifyWatcher.Event(watch: -1, name: "", mask: UInt32(IN_Q_OVERFLOW))) }
    }
}
