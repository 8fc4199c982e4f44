import Dispatch
import Glibc
import SpoolCore
import Synchronization

/// The daemon's `--limit-rate` for URLSession bodies: every body read (`BodyInputStream`) takes
/// its bytes from one shared `SendRateLimit`. URLSession reads a body stream synchronously on
/// its own queue and has no way to be told "later" (a read of 0 bytes ends the body), so a read
/// sleeps there until its bytes are due (50 ms at most). Every upload of the session waits on
/// that queue meanwhile, which is the point: the rate is the whole daemon's.
final class BodyRateGate: Sendable {
    private let limit: Mutex<SendRateLimit>
    /// Longest a read waits for its bytes: a full bucket's time (50 ms, or one byte's at under
    /// 20 bytes a second).
    private let turnSeconds: Double

    init(bytesPerSecond: Int64) {
        let limit = SendRateLimit(bytesPerSecond: bytesPerSecond)
        turnSeconds = limit.burst / limit.bytesPerSecond
        self.limit = Mutex(limit)
    }

    /// Bytes the caller may read and send now: `wanted`, or the rate's 50 ms if that is less
    /// (0 if `wanted` is 0).
    func take(upTo wanted: Int) -> Int {
        guard wanted > 0 else { return 0 }
        while true {
            let now = BodyRateGate.seconds()
            let (granted, wait) = limit.withLock { limit in
                let granted = limit.take(upTo: wanted, now: now)
                return (granted, granted > 0 ? 0 : limit.secondsUntilDue(wanted, now: now))
            }
            if granted > 0 { return granted }
            usleep(useconds_t(max(0.001, min(wait, 0.05)) * 1_000_000))
        }
    }

    /// How long a body may wait for its turn while `readers` bodies share the gate: its own read
    /// and each one before it wait up to `turnSeconds`.
    func longestTurnSeconds(readers: Int) -> Double { Double(readers) * turnSeconds }

    /// Returns bytes taken but not read.
    func giveBack(_ bytes: Int) {
        guard bytes > 0 else { return }
        limit.withLock { $0.giveBack(bytes) }
    }

    private static func seconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}
