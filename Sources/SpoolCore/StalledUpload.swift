/// When an upload counts as stalled on our side, not slowed by its server: the rule of
/// `URLSessionTransport`'s stall watch.
///
/// FoundationNetworking waits for libdispatch to say a socket is writable. Now and then (about
/// one attempt in 200 after a dropped connection, swift-corelibs-libdispatch#833) that event is
/// lost: the socket is writable, its send queue empty, and libcurl holds the rest of the body
/// until the idle timeout. A server that reads slowly looks different: bytes stay queued.
public enum StalledUpload {
    /// How long a started, unfinished body may go unread before the connections are looked at:
    /// half the idle timeout, between 2 and 10 s.
    public static func quietLimitSeconds(idleSeconds: Double) -> Double { max(2, min(10, idleSeconds / 2)) }

    /// Whether the process's connections to the upload's server show a writer that stopped:
    /// there is at least one, and no send queue holds a byte. One queue with bytes in it may be
    /// the quiet upload's own, waiting for a slow reader, so nothing is ended.
    public static func writerStopped(unsentBytes: [Int32: Int]) -> Bool {
        !unsentBytes.isEmpty && unsentBytes.values.allSatisfy { $0 == 0 }
    }
}
