import Dispatch
import Glibc
import SpoolCore
import SpoolSystem
import Synchronization

/// What URLSession's driver watches on the process's TCP connections (`TCPConnections`, through
/// SpoolSystem), for failures FoundationNetworking cannot see or stop itself:
/// - a flood: an answer cut at `HTTPAttempt.answerCutBytes` whose connection the server keeps
///   filling (`breakFlood`), and a connection that keeps receiving bytes URLSession never hands
///   over, a redirect's endless body (`watchUndelivered`);
/// - a stall: a body left unread while no connection to its server has a byte queued
///   (`writerStopped`), a write event libdispatch lost.
final class ConnectionWatch: Sendable {
    /// Sampling window and the least rate that counts as a flood (`breakFlood`).
    static let floodWindowSeconds = 0.05
    static let floodBytesPerSecond = Double(1 << 20)
    /// The least rate of bytes received and never handed over that makes a connection suspect
    /// (`UndeliveredFlood`): only headers legitimately are, a few hundred bytes per answer.
    static let undeliveredBytesPerSecond = Double(256 << 10)

    /// Answer bytes handed to spoold so far, all attempts (`UndeliveredFlood`).
    private let delivered = Atomic<UInt64>(0)
    private let undelivered: Mutex<UndeliveredFlood>
    private let resets = Atomic<Int>(0)
    /// Where a cut answer's connection is found by its traffic and aborted, apart from the queue
    /// tasks are cancelled on, whose cancel may be stuck.
    private let floods = DispatchQueue(label: "spoold.transport.floods")

    init(windowSeconds: Double) {
        undelivered = Mutex(UndeliveredFlood(windowSeconds: windowSeconds))
    }

    /// `count` answer bytes reached the delegate.
    func handedOver(_ count: Int) { delivered.add(UInt64(count), ordering: .relaxed) }

    /// Connections reset for bytes never handed over, so far.
    var resetsForUndeliveredBytes: Int { resets.load(ordering: .relaxed) }

    /// Aborts (resets), on a queue of its own, the connection a server is flooding: of this
    /// process's TCP connections to `port` (the cut answer's server), the one that received the
    /// most over `floodWindowSeconds`, at `floodBytesPerSecond` or more. The task's `cancel`
    /// would close it, but it waits for Foundation's work queue, which the flood keeps busy: for
    /// seconds, during which FoundationNetworking holds ~5-8 MiB more per second (docs/http.md "Bodies
    /// and answers"). Uploads that share the connection (as HTTP/2 streams) lose it too: their
    /// attempts are retried.
    func breakFlood(fromPort port: UInt16) {
        floods.async {
            let before = TCPConnections.bytesReceived(fromPort: port)
            usleep(UInt32(ConnectionWatch.floodWindowSeconds * 1_000_000))
            let after = TCPConnections.bytesReceived(fromPort: port)
            if let fd = FloodingConnection.pick(
                before: before, after: after, seconds: ConnectionWatch.floodWindowSeconds,
                minimumBytesPerSecond: ConnectionWatch.floodBytesPerSecond)
            {
                TCPConnections.abort(fd)
            }
        }
    }

    /// Aborts a connection to one of `ports` that keeps receiving what URLSession never hands
    /// over (a redirect's endless body, `UndeliveredFlood`): its task ends with a network error,
    /// which is retried.
    func watchUndelivered(ports: Set<UInt16>, at now: DispatchTime) {
        guard !ports.isEmpty else { return }
        var sample: [Int32: UInt64] = [:]
        for port in ports { sample.merge(TCPConnections.bytesReceived(fromPort: port)) { a, _ in a } }
        let handedOver = delivered.load(ordering: .relaxed)
        let flooded = undelivered.withLock {
            $0.observe(sample, delivered: handedOver, at: Double(now.uptimeNanoseconds) / 1e9,
                       minimumBytesPerSecond: ConnectionWatch.undeliveredBytesPerSecond)
        }
        if let flooded {
            // Counted first: the abort ends the attempt, whose outcome may be read at once.
            resets.add(1, ordering: .relaxed)
            TCPConnections.abort(flooded)
        }
    }

    /// Whether the connections to `port` show a writer that stopped (`StalledUpload`).
    static func writerStopped(port: UInt16) -> Bool {
        StalledUpload.writerStopped(unsentBytes: TCPConnections.unsentBytes(toPort: port))
    }

    /// The server port of an absolute URL (whose connections the watches look at).
    static func port(of url: String) -> UInt16? { HTTPOrigin(url).flatMap { UInt16(exactly: $0.port) } }
}
