import Foundation
import SpoolCore
import SpoolTransport

/// A clock that moves only when told to, with a scripted "random" for jitter.
public final class ManualClock: Clock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Timestamp
    private var randoms: [Double]
    private var nextRandom = 0

    /// - Parameter randoms: returned in turn by `unitRandom()`, cycling; each must be in [0, 1).
    public init(_ start: Timestamp = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000), randoms: [Double] = [0.5]) {
        precondition(!randoms.isEmpty && randoms.allSatisfy { $0 >= 0 && $0 < 1 }, "randoms must be in [0, 1)")
        current = start
        self.randoms = randoms
    }

    public func now() -> Timestamp { lock.withLock { current } }

    public func unitRandom() -> Double {
        lock.withLock {
            defer { nextRandom = (nextRandom + 1) % randoms.count }
            return randoms[nextRandom]
        }
    }

    public func set(_ time: Timestamp) { lock.withLock { current = time } }

    public func advance(bySeconds seconds: Double) { lock.withLock { current = current.adding(seconds: seconds) } }

    public func setRandoms(_ values: [Double]) {
        precondition(!values.isEmpty && values.allSatisfy { $0 >= 0 && $0 < 1 }, "randoms must be in [0, 1)")
        lock.withLock {
            randoms = values
            nextRandom = 0
        }
    }
}
