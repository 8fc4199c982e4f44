import Foundation
import SpoolEngine

/// Where an engine's syncs wait until the test makes them (`SyncThread.custom`): each turn the
/// engine's durability worker asks for is queued, and `release` runs the first ones on the
/// test's thread, in order, as a slow disk would finish them (a turn makes every sync handed over
/// until it runs). The engine is woken after each, as in the daemon.
public final class HeldSyncs: @unchecked Sendable {
    private let lock = NSLock()
    private var queued: [@Sendable () -> Void] = []

    public init() {}

    /// The engine's `syncs:` argument.
    public var thread: SyncThread { .custom { [self] work in lock.withLock { queued.append(work) } } }

    /// Turns asked for and not run yet.
    public var waiting: Int { lock.withLock { queued.count } }

    /// Runs the first `count` turns waiting (all of them by default), in order.
    public func release(_ count: Int = .max) {
        for _ in 0..<count {
            guard let next = lock.withLock({ queued.isEmpty ? nil : queued.removeFirst() }) else { return }
            next()
        }
    }
}
