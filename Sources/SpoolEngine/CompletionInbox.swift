import SpoolCore
import SpoolSystem
import Synchronization

/// Where upload completions (on URLSession's threads) and stop requests (on a signal queue)
/// meet the single-threaded engine: a locked list plus a wake-up of its `poll(2)`.
public final class CompletionInbox: Sendable {
    /// One upload's outcome, as the transport reported it.
    public struct Completion: Sendable {
        public var id: ItemID
        public var outcome: UploadOutcome
    }

    /// Written by every post and stop request; the production driver polls its read end.
    public let wakeup: WakeupPipe
    private let completions = Mutex<[Completion]>([])
    private let reports = Mutex<[TransportReport]>([])
    private let stopRequests = Mutex(0)

    public init() throws { wakeup = try WakeupPipe() }

    public func post(_ id: ItemID, _ outcome: UploadOutcome) {
        completions.withLock { $0.append(Completion(id: id, outcome: outcome)) }
        wakeup.signal()
    }

    public func report(_ report: TransportReport) {
        reports.withLock { $0.append(report) }
        wakeup.signal()
    }

    public func takeReports() -> [TransportReport] {
        reports.withLock { list in
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
    }

    public func takeAll() -> [Completion] {
        completions.withLock { list in
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
    }

    /// Whether a completion is waiting (the embedded driver runs a step at once, as `poll(2)` would wake).
    public var hasCompletions: Bool { completions.withLock { !$0.isEmpty } || reports.withLock { !$0.isEmpty } }

    public func requestStop() {
        stopRequests.withLock { $0 += 1 }
        wakeup.signal()
    }

    /// How many stop requests arrived so far.
    public var stopLevel: Int { stopRequests.withLock { $0 } }
}
