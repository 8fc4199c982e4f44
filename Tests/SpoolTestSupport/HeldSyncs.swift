import Foundation
import SpoolEngine

/// Where an engine's syncs wait until the test makes them (`SyncThread.custom`): each work the
/// engine hands over is queued, and `release` makes the first ones on the test's thread, in
/// order, as a slow disk would finish them. The engine is woken after each, as in the daemon.
public final class HeldSyncs: @unchecked Sendable {
    private let lock = NSLock()
    private var queued: [@Sendable () -> Void] = []

    public init() {}

    /// The engine's `syncs:` argument.
    public var thread: SyncThread { .custom { [self] work in lock.withLock { queued.append(work) } } }

    /// Syncs handed over and not made yet.
    public var waiting: Int { lock.withLock { queued.count } }

    /// Makes the first `count` syncs waiting (all of them by default), in order.
    public func release(_ count: Int = .max) {
        for _ in 0..<count {
            guard let next = lock.withLock({ queued.isEmpty ? nil : queued.removeFirst() }) else { return }
            next()
        }
    }
}
