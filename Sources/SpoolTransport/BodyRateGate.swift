import Dispatch
import Glibc
import SpoolCore
import Synchronization

/// The daemon's `--limit-rate`: every body read of either transport (`BodyReader`) takes its
/// bytes from one shared `SendRateLimit`, at the rate in force (`SendRate`: a timetable changes
/// it for the uploads under way), so the rate is the whole daemon's however many uploads share
/// it, and an upload that has sent its body leaves its share to the others. A read sleeps until
/// its bytes are due (50 ms at most): URLSession reads a body stream synchronously on its own
/// queue and has no way to be told "later" (a read of 0 bytes ends the body); libcurl's read
/// callback runs on the transfers' thread, which waits the same way. (libcurl's own
/// `CURLOPT_MAX_SEND_SPEED_LARGE` is per transfer: shared out equally, it left the rate of a
/// transfer waiting for its answer unused.)
public final class BodyRateGate: Sendable {
    /// The rate in force (`--limit-rate` may be a timetable).
    private let rate: SendRate
    /// The bucket at the rate last in force; nil before the first limited read.
    private let limit = Mutex<SendRateLimit?>(nil)

    /// Bytes granted so far, all bodies together (tests read it).
    private let granted = Atomic<Int64>(0)

    public init(rate: SendRate) { self.rate = rate }

    public convenience init(bytesPerSecond: Int64) { self.init(rate: SendRate(bytesPerSecond: bytesPerSecond)) }

    /// Bytes the caller may read and send now: `wanted`, or the rate's 50 ms if that is less
    /// (0 if `wanted` is 0). While the timetable says `off`, `wanted` at once.
    func take(upTo wanted: Int) -> Int {
        guard wanted > 0 else { return 0 }
        while true {
            guard let inForce = rate.bytesPerSecond() else { return wanted }
            let now = BodyRateGate.seconds()
            let (granted, wait) = limit.withLock { limit in
                if limit == nil { limit = SendRateLimit(bytesPerSecond: inForce) }
                if limit!.bytesPerSecond != Double(max(1, inForce)) { limit!.change(bytesPerSecond: inForce) }
                let granted = limit!.take(upTo: wanted, now: now)
                return (granted, granted > 0 ? 0 : limit!.secondsUntilDue(wanted, now: now))
            }
            if granted > 0 {
                self.granted.add(Int64(granted), ordering: .relaxed)
                return granted
            }
            usleep(useconds_t(max(0.001, min(wait, 0.05)) * 1_000_000))
        }
    }

    /// How long a body may wait for its turn while `readers` bodies share the gate: its own read
    /// and each one before it wait up to a full bucket's time at the rate in force (50 ms, or
    /// one byte's at under 20 bytes a second; nothing while there is no limit).
    func longestTurnSeconds(readers: Int) -> Double {
        guard let inForce = rate.bytesPerSecond() else { return 0 }
        return Double(readers) * SendRateLimit(bytesPerSecond: inForce).turnSeconds
    }

    /// Returns bytes taken but not read.
    func giveBack(_ bytes: Int) {
        guard bytes > 0 else { return }
        granted.subtract(Int64(bytes), ordering: .relaxed)
        limit.withLock { $0?.giveBack(bytes) }
    }

    /// Body bytes the gate let through, every transfer of the daemon together.
    public var bytesGranted: Int64 { granted.load(ordering: .relaxed) }

    private static func seconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}
