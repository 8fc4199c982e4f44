/// A small loopback HTTP/1.1 server that records what it receives and answers from a script,
/// including scripted faults. Built for tests (in-process, as the real server `spoold` uploads
/// to) and for trying spoold out; it is not a production server.
///
/// - Binds 127.0.0.1 only; one thread per connection, at most 256 connections (extra ones are
///   closed at once).
/// - Keep-alive, `Connection: close`, `Content-Length` and chunked bodies, `Expect: 100-continue`.
/// - Heads over 64 KiB get 431; bodies stream through in 64 KiB pieces, so with
///   `keepBodiesInMemory: false` even multi-GiB uploads keep memory flat.
/// - The script is consulted once per request, right after the head: see `ResponseScript`.
/// - With a `storeDirectory`, each complete body answered 2xx is written to
///   `<dir>/<index>-<sanitised name>` (see `storedFileName(index:target:)`) via a dot-named
///   temporary file and a rename, before the response is sent. A body that cannot be stored is
///   answered 507 instead of the scripted status. Files from an earlier run with the same index
///   are replaced. Stored files are not fsynced.
public final class UploadReceiver: @unchecked Sendable {
    private let core: ReceiverCore

    public init(script: ResponseScript = .always(201), storeDirectory: String? = nil, keepBodiesInMemory: Bool = true) {
        core = ReceiverCore(script: script, storeDirectory: storeDirectory, keepsBodiesInMemory: keepBodiesInMemory)
    }

    deinit {
        core.stop()
    }

    /// Binds 127.0.0.1:`port` (0 picks a free port), starts accepting, and returns the bound port.
    /// A receiver starts once; a second call throws `ReceiverError.alreadyStarted`.
    @discardableResult
    public func start(port: UInt16 = 0) throws -> UInt16 {
        try core.start(port: port)
    }

    /// The bound port; 0 before `start`.
    public var port: UInt16 { core.port }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Replaces the script; requests whose head is parsed afterwards use the new one.
    public func setScript(_ script: ResponseScript) {
        core.setScript(script)
    }

    /// Calls `observe` on the connection's thread once each request is fully handled, just
    /// before `waitForRequests` counts it (so a wait that returns true has seen the observer
    /// run for those requests). Requests on different connections may be observed in any
    /// order. Replaces any earlier observer.
    public func setObserver(_ observe: @escaping @Sendable (ReceivedRequest) -> Void) {
        core.setObserver(observe)
    }

    /// A snapshot of every request whose head was parsed, in arrival order (`requests[i].index
    /// == i`). A request still being read appears with its body incomplete.
    public var requests: [ReceivedRequest] { core.requests }

    /// How many requests are fully handled: response sent, fault applied, or client gone.
    public var handledRequestCount: Int { core.handledRequestCount }

    /// Blocks until at least `count` requests are fully handled (response sent, fault applied,
    /// or the client went away mid-request) or `timeout` seconds pass; returns whether the count
    /// was reached. Woken by a condition variable, not by polling.
    public func waitForRequests(count: Int, timeout: Double) -> Bool {
        core.waitForRequests(count: count, timeout: timeout)
    }

    /// Closes the listener and every connection (including ones held by `neverAnswer`) and
    /// waits for their threads to exit. Idempotent; also called on deinit. Do not call it from
    /// a script or observer: it would wait for its own thread (for at most 10 s).
    public func stop() {
        core.stop()
    }

    /// The file name a stored body gets for the request with this index and request-target:
    /// `<index>-<last path component, percent-decoded, each character outside [A-Za-z0-9._-]
    /// replaced by "_">`, or `<index>-body` when that is empty.
    public static func storedFileName(index: Int, target: String) -> String {
        StoredFileName.make(index: index, target: target)
    }
}
