import Dispatch
import Synchronization

/// How far one attempt's body has been read, and when it last was: the bytes an attempt sent
/// (`HTTPAttempt.bodySent`) and the evidence of URLSession's stall watch. Written from the
/// transport's read callback (`BodyReader`), read by the transport's driver and sweeper.
public final class BodyProgress: Sendable {
    private struct Reading {
        var bytes: Int64 = 0
        var lastRead: UInt64
    }

    private let reading: Mutex<Reading>
    /// The body's length: libcurl stops reading at `Content-Length`, without asking for the end.
    let total: Int64

    public init(total: Int64) {
        self.total = total
        reading = Mutex(Reading(lastRead: DispatchTime.now().uptimeNanoseconds))
    }

    /// `count` more bytes were read.
    func read(_ count: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        reading.withLock {
            $0.bytes += Int64(count)
            $0.lastRead = now
        }
    }

    /// A fresh stream of the body was handed out (libcurl sends it again from byte 0).
    func restarted() {
        let now = DispatchTime.now().uptimeNanoseconds
        reading.withLock {
            $0.bytes = 0
            $0.lastRead = now
        }
    }

    /// Bytes read since the body was last started.
    public var bytes: Int64 { reading.withLock { $0.bytes } }

    /// Seconds since the body was last read, while it is started (a byte was read) and not
    /// complete (short of its length); nil otherwise.
    func quietSeconds(now: UInt64) -> Double? {
        reading.withLock { r in
            guard r.bytes > 0, r.bytes < total, now > r.lastRead else { return nil }
            return Double(now - r.lastRead) / 1e9
        }
    }
}
