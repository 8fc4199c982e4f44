import Foundation
import SpoolCore
import SpoolSystem

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

extension LocalZone {
    /// The machine's zone (`TZ`, else `/etc/localtime`) through the C library: what the
    /// `--limit-rate` and `--upload-window` timetables are read in.
    public static let system: LocalZone = {
        LocalTimeOffset.load()
        return LocalZone { LocalTimeOffset.secondsEast(atSecondsSinceEpoch: $0) }
    }()
}
