import Dispatch
import SpoolStore
import Synchronization

/// Makes the spool's syncs (`SyncWork`) away from the engine's loop, in the order they were
/// handed over (those waiting together as one), and wakes the loop as each is made: under
/// another program's heavy writes one fsync took a minute, and the loop waiting in it read no
/// answers, kept no deadlines and started nothing meanwhile.
///
/// After a failed sync nothing more is made (the work still handed over is dropped): the loop
/// sees the failure at its next step and stops the daemon, as a failed fsync always does (a
/// failed fsync is never retried and trusted).
final class DurabilityWorker: Sendable {
    private struct State {
        var handedOver = 0
        /// The last work made (tickets are made in order).
        var made = 0
        var failure: (any Error)?
        /// Handed over, not made yet: made together by the next turn of the thread.
        var waiting: [(ticket: Int, work: SyncWork)] = []
        /// Whether the loop wants a wake when a sync is made (`loopWaits`).
        var wakeWanted = true
        /// A turn of the thread is asked for and has not taken the waiting work yet: work handed
        /// over meanwhile joins it instead of asking for another.
        var turnAsked = false
    }

    private let state = Mutex(State())
    private let run: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Wakes the engine's loop once a sync made on another thread is done.
    private let wake: (@Sendable () -> Void)?
    /// Entered for each work handed over, left when it is made or dropped (`waitForAll`).
    private let outstanding = DispatchGroup()

    init(_ thread: SyncThread, wake: @escaping @Sendable () -> Void) {
        switch thread {
        case .own:
            let queue = DispatchQueue(label: "spoold.engine.durability")
            run = { queue.async(execute: $0) }
            self.wake = wake
        case .loop:
            run = { $0() }
            self.wake = nil
        case .custom(let executor):
            run = executor
            self.wake = wake
        }
    }

    /// Hands `work` over; returns its ticket (`isMade`).
    func handOver(_ work: SyncWork) -> Int {
        outstanding.enter()
        let (ticket, asks) = state.withLock { state in
            state.handedOver += 1
            state.waiting.append((state.handedOver, work))
            defer { state.turnAsked = true }
            return (state.handedOver, !state.turnAsked)
        }
        if asks { run { [self] in makeWaiting() } }
        return ticket
    }

    /// Makes every work waiting, as one (`SyncWork.merging`): while one slow fsync is made, the
    /// loop may hand over many more, and the next turn makes them with one call each, however
    /// many there are (group commit), instead of falling further behind with one per round.
    private func makeWaiting() {
        let (taken, failed) = state.withLock { state in
            defer {
                state.waiting = []
                state.turnAsked = false
            }
            return (state.waiting, state.failure != nil)
        }
        defer { for _ in taken { outstanding.leave() } }
        guard let last = taken.last, let work = SyncWork.merging(taken.map(\.work)) else { return }
        guard !failed else { return work.discard() }
        let wakes: Bool
        do {
            try work.perform()
            wakes = state.withLock { state in
                state.made = last.ticket
                return state.wakeWanted
            }
        } catch {
            state.withLock { $0.failure = error }
            wakes = true
        }
        if wakes { wake?() }
    }

    /// Says whether the loop, about to wait, wants to be woken when a sync is made (otherwise
    /// something else wakes it soon). Check `isMade` after this: a sync made just before it did
    /// not wake the loop.
    func loopWaits(wantingWake: Bool) { state.withLock { $0.wakeWanted = wantingWake } }

    /// Whether the work of `ticket` is made (and every work handed over before it).
    func isMade(_ ticket: Int) -> Bool { state.withLock { $0.made >= ticket } }

    /// The sync that failed, if one did: the daemon stops.
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// Waits until every work handed over is made (or dropped after a failure).
    func waitForAll() { outstanding.wait() }
}

/// Where the engine's syncs are made (`DurabilityWorker`).
public enum SyncThread: Sendable {
    /// A thread of their own (the daemon).
    case own
    /// At once, on the loop's thread: the engine waits for each, as it did before the worker
    /// (tests whose subject is not the disk's timing; every step then ends with its round durable).
    case loop
    /// A test's executor: runs the closures it is given one at a time, in order, on any thread.
    case custom(@Sendable (@escaping @Sendable () -> Void) -> Void)
}
