import Dispatch
import Foundation
import SpoolCore

/// The two times a transport hands its attempts (`HTTPAttempt`): a monotonic clock in seconds for
/// deadlines, and the wall clock for an answer's `Retry-After` date.
public enum Now {
    /// Seconds since boot, which never step back.
    public static var seconds: Double { seconds(.now()) }
    public static func seconds(_ time: DispatchTime) -> Double { Double(time.uptimeNanoseconds) / 1e9 }
    /// The wall clock.
    public static var date: Timestamp { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) }
}
