import Dispatch
import Foundation

/// The session's delegate queue, with back pressure: `addOperation` blocks while `limit`
/// operations are waiting.
///
/// FoundationNetworking hands every piece of an answer (and every piece of body sent) to the
/// delegate queue with `addOperation`, from libcurl's thread, and never waits: a server that
/// answers faster than the delegate runs (a fast endless answer on loopback) grew that backlog
/// by hundreds of MB. Blocking the producer here bounds it to `limit` pieces (16 KiB each), and
/// slows libcurl's reading to the delegate's pace, which TCP passes on to the server.
///
/// Rule for the delegate: an operation on this queue must never wait for the session's work
/// queue (making a task does, with `workQueue.sync`): that thread may be the one blocked here.
final class BoundedOperationQueue: OperationQueue, @unchecked Sendable {
    private let slots: DispatchSemaphore

    init(limit: Int) {
        slots = DispatchSemaphore(value: limit)
        super.init()
        maxConcurrentOperationCount = 1
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        slots.wait()
        let slots = self.slots
        super.addOperation {
            block()
            slots.signal()
        }
    }
}
