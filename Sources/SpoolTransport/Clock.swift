import Foundation
import SpoolCore

/// Where the engine gets the time and its jitter; tests inject a manual one.
public protocol Clock: Sendable {
    func now() -> Timestamp
    /// A value in [0, 1) for backoff jitter.
    func unitRandom() -> Double
}

/// The real clock: wall time for on-disk times (mtimes, ids, history).
public struct SystemClock: Clock {
    public init() {}
    public func now() -> Timestamp { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) }
    public func unitRandom() -> Double { Double.random(in: 0..<1) }
}
