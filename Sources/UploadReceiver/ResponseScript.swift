/// Decides the response for each request a receiver gets.
///
/// The decision is made once per request, right after its head is parsed and before any of the
/// body is read: the closure gets the head-only request (`body` empty, `bodyComplete` false,
/// `index` set). That single call lets faults act before or during the body
/// (`closeBeforeBody`, `closeMidBody`), keeps stateful scripts such as `perKey` counting each
/// request exactly once, and means a script cannot look at the body. The chosen response is
/// sent only after the whole body has been read.
///
/// The closure runs on the connection's thread, outside the receiver's lock, possibly on several
/// threads at once; it may read `UploadReceiver.requests`.
public struct ResponseScript: Sendable {
    let decide: @Sendable (ReceivedRequest) -> ScriptedResponse

    public init(_ decide: @escaping @Sendable (ReceivedRequest) -> ScriptedResponse) {
        self.decide = decide
    }

    /// What the script answers to `request`; the receiver calls this once per request. Calling
    /// it directly counts too (it advances `perKey`'s counters).
    public func response(for request: ReceivedRequest) -> ScriptedResponse {
        decide(request)
    }

    /// Every request gets `status` with an empty body.
    public static func always(_ status: Int) -> ResponseScript {
        let response = ScriptedResponse.status(status)
        return ResponseScript { _ in response }
    }

    /// Every request gets `response`.
    public static func always(_ response: ScriptedResponse) -> ResponseScript {
        ResponseScript { _ in response }
    }

    /// The request with arrival index i gets `responses[i]`; later ones get `last`.
    public static func sequence(_ responses: [ScriptedResponse], thenAlways last: ScriptedResponse) -> ResponseScript {
        ResponseScript { request in
            responses.indices.contains(request.index) ? responses[request.index] : last
        }
    }

    /// A store with a request rate, as S3 has per prefix: up to `perSecond` requests a second
    /// (a bucket of a tenth of a second's, at least one) are answered by `script`, the rest get
    /// `throttled` (by default S3's `503 SlowDown` always) without consulting it. Counted as
    /// each request's head arrives.
    public static func throttling(
        perSecond: Int, _ script: ResponseScript, throttled: ResponseScript = .always(ScriptedResponse.slowDown)
    ) -> ResponseScript {
        let bucket = RequestBucket(perSecond: perSecond, burst: max(1, perSecond / 10))
        return ResponseScript { request in bucket.take() ? script.response(for: request) : throttled.response(for: request) }
    }

    /// Per distinct value of the `Idempotency-Key` header, the n-th request (0-based, in the
    /// order the script is consulted) gets `responses[n]`, later ones get `then`. Requests
    /// without the header share one counter.
    public static func perKey(_ responses: [ScriptedResponse], then: ScriptedResponse) -> ResponseScript {
        let counter = PerKeyCounter()
        return ResponseScript { request in
            let n = counter.next(for: request.header("Idempotency-Key") ?? "")
            return responses.indices.contains(n) ? responses[n] : then
        }
    }
}
