import SpoolCore
import SpoolSystem
import Synchronization

/// Where upload completions (on URLSession's threads) and stop requests (on a signal queue)
/// meet the single-threaded engine: a locked list plus a wake-up of its `poll(2)`.
final class CompletionInbox: Sendable {
    struct Completion: Sendable {
        var id: ItemID
        var outcome: UploadOutcome
    }

    let wakeup: WakeupPipe
    private let completions = Mutex<[Completion]>([])
    private let stopRequests = Mutex(0)

    init() throws { wakeup = try WakeupPipe() }

    func post(_ id: ItemID, _ outcome: UploadOutcome) {
        completions.withLock { $0.append(Completion(id: id, outcome: outcome)) }
        wakeup.signal()
    }

    func takeAll() -> [Completion] {
        completions.withLock { list in
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
    }

    func requestStop() {
        stopRequests.withLock { $0 += 1 }
        wakeup.signal()
    }

    var stopLevel: Int { stopRequests.withLock { $0 } }
}
