import Synchronization

/// Cancels one request: the sender keeps it, the transport registers how to stop the request
/// (`whenCancelled`). A cancel that comes first is kept, and the handler runs as it is registered.
/// The request still reports once, as `UploadOutcome.cancelled` unless its outcome came first.
/// Never call `cancel` from a transport's own callback queue (see `URLSessionTransport`).
public final class RequestCancellation: Sendable {
    private let state = Mutex<(cancelled: Bool, handler: (@Sendable () -> Void)?)>((false, nil))

    public init() {}

    public func cancel() {
        let handler: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            defer { state.handler = nil }
            return state.handler
        }
        handler?()
    }

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// For the transport: `handler` runs once, on `cancel` (at once if it already came).
    public func whenCancelled(_ handler: @escaping @Sendable () -> Void) {
        let now: Bool = state.withLock { state in
            if state.cancelled { return true }
            state.handler = handler
            return false
        }
        if now { handler() }
    }
}
