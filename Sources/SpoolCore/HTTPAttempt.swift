/// One HTTP attempt of one request, across its redirect hops: the rules every transport follows,
/// written once as a state machine (swift-nio's `NIOTypedHTTPClientUpgraderStateMachine` is the
/// model). A transport (URLSession, libcurl) is its driver: it reports what it saw (each event is
/// a `mutating func`) and does what the returned `Action` says. Pure: the times come in with the
/// events, nothing here does I/O.
///
/// The attempt owns the request's headers (`HeaderRule` checked where they are built), the
/// answer's excerpt and its cut (`answerCutBytes`), redirects (`RedirectPolicy`), the deadline
/// across every hop, the stall rule's outcome, and which outcome a transfer's end is:
/// - A body that could not be read to its recorded size (the blob changed under the upload) is
///   the item's fault, whatever the transfer did: a final refusal (`blob_changed`).
/// - An answer is the outcome once its status and whole body (by its `Content-Length`) arrived,
///   whatever the connection did next: a server may answer before it has read the whole body and
///   then close or reset the connection (nginx's `return 201`; an HTTP/2 `RST_STREAM`, RFC 9113
///   section 8.1). Taking that for a lost request sent the item again.
/// - An answer passed `answerCutBytes` is not read further: its status is the outcome.
/// - A failure the transport could not name is an outage (nothing went out) only when the request
///   has a body and not one byte of it was taken, and nothing of an answer came.
/// - A hop that got no answer because the server refused the TLS handshake for the client
///   certificate (`ClientCertificateRefusal`: its alert, or what the handshake showed) is a
///   configuration problem, whatever the transport called the failure.
public struct HTTPAttempt: Sendable {
    /// What the attempt sends, as the engine (or an S3 step) built it.
    public struct Request: Sendable {
        public var method: String
        public var url: String
        /// The request's own headers (the operator's, the item's, S3's signature).
        public var headers: [String: String]
        public var contentType: String
        /// Sent as `Idempotency-Key`: the same on every attempt of an item.
        public var idempotencyKey: String
        /// Bytes of the body; nil: no body at all (an S3 GET, HEAD or DELETE).
        public var bodyLength: Int64?
        /// Whether a `Content-Digest` is computed before the first hop (`--content-digest`).
        public var wantsContentDigest: Bool
        /// Whether the body is compressed as it is sent and not measured yet: its coded length
        /// (its `Content-Length`) is read before the first hop (`--compress`).
        public var measuresBody: Bool
        /// Whether a redirect `redirects` allows is followed; false: a 3xx is the outcome.
        public var followsRedirects: Bool
        public var redirects: RedirectPolicy
        /// Bytes of the answer's body kept in the outcome (`--success-json`, an S3 step's XML); 0:
        /// the excerpt only.
        public var answerKeep: Int
        /// The attempt's deadline from its start, every hop included (`--timeout`).
        public var deadlineSeconds: Double

        public init(
            method: String, url: String, headers: [String: String], contentType: String, idempotencyKey: String,
            bodyLength: Int64?, wantsContentDigest: Bool = false, measuresBody: Bool = false, followsRedirects: Bool = true,
            redirects: RedirectPolicy = RedirectPolicy(), answerKeep: Int = 0, deadlineSeconds: Double
        ) {
            (self.method, self.url, self.headers, self.contentType) = (method, url, headers, contentType)
            (self.idempotencyKey, self.bodyLength, self.wantsContentDigest) = (idempotencyKey, bodyLength, wantsContentDigest)
            self.measuresBody = measuresBody
            (self.followsRedirects, self.redirects, self.answerKeep) = (followsRedirects, redirects, answerKeep)
            self.deadlineSeconds = deadlineSeconds
        }
    }

    /// One request on the wire: the first, or a redirect's.
    public struct Hop: Equatable, Sendable {
        public var url: String
        /// 0 for the first request, then one more per redirect followed.
        public var number: Int
        /// Every header to send, in order, spoold's own last (`HTTPAttempt.headers`).
        public var headers: [HeaderRule.Field]
    }

    /// What the transport does next.
    public enum Action: Equatable, Sendable {
        /// Nothing: go on.
        case none
        /// Read the body once before anything is sent (hash it for the `Content-Digest`, measure
        /// its compressed form) and report `bodyPrepared` (or `bodyUnprepared`).
        case prepareBody
        /// Start a transfer for this hop (the first request or a redirect's), the body from byte 0.
        case send(Hop)
        /// Stop reading the answer and end the transfer; report `transferEnded` with its status.
        case stopReading
        /// The attempt is over: release the body, report this outcome, forget the transfer (and
        /// stop it if it still runs). Returned once.
        case finish(UploadOutcome)
    }

    /// Answer bytes read before an answer counts as complete by its status alone.
    public static let answerCutBytes: Int64 = 1 << 20

    private enum State {
        case idle
        case preparing
        case transferring(Transfer)
        case finished
    }

    /// One hop on the wire and what came back so far.
    private struct Transfer {
        var hop: Hop
        var head: AnswerHead?
        /// The answer's first bytes, up to `keepLimit`.
        var kept: [UInt8] = []
        var received: Int64 = 0
        var cut = false
        var bodySent: Int64 = 0
        /// What the transport saw of the hop's TLS handshake, if it watches them.
        var handshake: TLSHandshakeNote?
    }

    public let request: Request
    /// When the attempt ends whatever its hops do, on the events' monotonic clock (seconds).
    public let deadline: Double
    private var state = State.idle
    private var contentDigest: String?

    public init(_ request: Request, now: Double) {
        self.request = request
        deadline = now + request.deadlineSeconds
    }

    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// The hop on the wire, if one is.
    public var hop: Hop? {
        if case .transferring(let transfer) = state { return transfer.hop }
        return nil
    }

    /// Whether the hop on the wire has no answer head yet.
    public var awaitsHead: Bool {
        if case .transferring(let transfer) = state { return transfer.head == nil }
        return false
    }

    /// What is left of the deadline at `now` (a hop's own timeout, with libcurl).
    public func remainingSeconds(now: Double) -> Double { deadline - now }

    private var keepLimit: Int { max(AnswerExcerpt.length, request.answerKeep) }

    // MARK: Events

    /// The attempt begins: its URL and headers are checked before anything is sent.
    public mutating func start() -> Action {
        guard case .idle = state else { preconditionFailure("an attempt starts once") }
        guard HTTPOrigin(request.url) != nil else {
            return finish(.refusal(.urlRefused, "invalid upload URL '\(request.url)'"))
        }
        // A line break in a value would start another field, or another request.
        if let problem = HeaderRule.requestProblem(headers: request.headers, contentType: request.contentType) {
            return finish(.refusal(.headerRefused, "not sent: \(problem)"))
        }
        if request.wantsContentDigest || request.measuresBody {
            state = .preparing
            return .prepareBody
        }
        return send(url: request.url, number: 0)
    }

    /// The body was read: its `Content-Digest` header value (when wanted) is ready, and a
    /// compressed body is measured: the first hop goes.
    public mutating func bodyPrepared(contentDigest headerValue: String?) -> Action {
        guard case .preparing = state else { return .none }
        contentDigest = headerValue
        return send(url: request.url, number: 0)
    }

    /// The body could not be read before sending: nothing was sent.
    public mutating func bodyUnprepared(_ detail: String) -> Action {
        guard case .preparing = state else { return .none }
        let what = request.wantsContentDigest ? "compute the Content-Digest" : "compress the body to measure it"
        return finish(.failed(.bodyUnhashable(what, detail)))
    }

    /// One header line of the answer (libcurl's callback); a status line starts a new head.
    public mutating func answerHeaderLine(_ line: AnswerHeaderLine) {
        withTransfer { transfer in
            var head = transfer.head ?? AnswerHead()
            head.take(line)
            transfer.head = head
        }
    }

    /// The answer's whole head (URLSession hands it over at once).
    public mutating func answerHead(_ head: AnswerHead) {
        withTransfer { $0.head = head }
    }

    /// Bytes of the answer's body: kept up to what the outcome needs, counted, and cut at
    /// `answerCutBytes` (`stopReading`, once).
    public mutating func answerBytes(_ bytes: UnsafeRawBufferPointer) -> Action {
        let keepLimit = self.keepLimit
        return withTransfer { transfer in
            let room = keepLimit - transfer.kept.count
            if room > 0 { transfer.kept.append(contentsOf: bytes.prefix(room)) }
            transfer.received += Int64(bytes.count)
            guard transfer.received > HTTPAttempt.answerCutBytes, !transfer.cut else { return Action.none }
            transfer.cut = true
            return .stopReading
        } ?? .none
    }

    /// How many body bytes the transport has taken so far for this hop (from byte 0 again when it
    /// sends the body again on a fresh connection).
    public mutating func bodySent(totalBytes: Int64) {
        withTransfer { $0.bodySent = totalBytes }
    }

    /// What the hop's TLS handshake showed (libcurl's transport watches them): reported before
    /// `transferEnded`, for a hop whose connection was made for it.
    public mutating func handshakeSeen(_ note: TLSHandshakeNote) {
        withTransfer { $0.handshake = note }
    }

    /// The hop's transfer ended: with the answer's `status` if a head arrived (0 or nil if not),
    /// `error` if the transport failed (nil: it completed), and `bodyFailure` if the body could
    /// not be read to its recorded size. `date` resolves a `Retry-After` date.
    public mutating func transferEnded(status: Int?, error: TransferError?, bodyFailure: String?, now: Double, date: Timestamp) -> Action {
        guard case .transferring(let transfer) = state else { return .none }
        if let bodyFailure { return finish(.refusal(.blobChanged, bodyFailure)) }
        let status = status.flatMap { $0 > 0 ? $0 : nil }
        guard let status, error == nil || transfer.cut || answerArrivedWhole(transfer, status: status) else {
            return finish(.failed(failure(error ?? .unnamed("the transfer ended without an answer"), transfer, now: now)))
        }
        let excerpt = AnswerExcerpt.line(transfer.kept)
        if request.followsRedirects {
            // An empty Location is no Location.
            let location = transfer.head?.location.flatMap { $0.isEmpty ? nil : URLReference.resolve($0, against: transfer.hop.url) }
            switch request.redirects.decide(
                status: status, method: request.method, from: transfer.hop.url, location: location, hopsSoFar: transfer.hop.number)
            {
            case .follow(let target):
                return send(url: target, number: transfer.hop.number + 1)
            case .refuse(let reason):
                return finish(.refusal(.redirectRefused, reason, status: status, excerpt: excerpt))
            case .notARedirect:
                break
            }
        }
        var answer = HTTPAnswer(status: status, excerpt: excerpt)
        answer.etag = transfer.head?.etag
        answer.contentLength = transfer.head?.contentLength
        answer.tus = transfer.head?.tus
        if (200..<300).contains(status) { answer.location = transfer.head?.location }
        answer.retryAfterSeconds = transfer.head?.retryAfter.flatMap { RetryAfter.seconds(from: $0, now: date) }
        if request.answerKeep > 0 {
            answer.body = Array(transfer.kept.prefix(request.answerKeep))
            answer.bodyTruncated = transfer.received > Int64(request.answerKeep)
        }
        return finish(.answered(answer))
    }

    /// The transport's clock says `now`: past the deadline, the attempt ends there.
    public mutating func deadlineCheck(now: Double) -> Action {
        guard now >= deadline else { return .none }
        switch state {
        case .preparing, .transferring: return finish(.failed(.deadline(seconds: request.deadlineSeconds)))
        case .idle, .finished: return .none
        }
    }

    /// The transport's stall watch found the body unread for `quietSeconds` with nothing queued
    /// on the connection (`StalledUpload`).
    public mutating func stalled(quietSeconds: Double) -> Action {
        guard case .transferring = state else { return .none }
        return finish(.failed(.stalled(quietSeconds: quietSeconds)))
    }

    /// The transport cannot send to the hop's URL (one it cannot parse): nothing was sent.
    public mutating func hopRefused(_ reason: String) -> Action {
        guard case .transferring = state else { return .none }
        return finish(.refusal(.urlRefused, reason))
    }

    /// The attempt was cancelled on request (`cancelAll`, a per-request cancel).
    public mutating func cancel() -> Action {
        if case .finished = state { return .none }
        return finish(.cancelled)
    }

    // MARK: Rules

    /// The headers of every hop: spoold's `User-Agent` unless the request has one, the request's
    /// own (sorted, so the wire is the same whichever transport), then `Content-Type`,
    /// `Idempotency-Key` and `Content-Digest`, which no request header replaces.
    public static func headers(_ request: Request, contentDigest: String?) -> [HeaderRule.Field] {
        var fields = [HeaderRule.Field(name: "User-Agent", value: SpooldVersion.userAgent)]
        func set(_ name: String, _ value: String) {
            let lower = name.lowercased()
            fields.removeAll { $0.name.lowercased() == lower }
            fields.append(HeaderRule.Field(name: name, value: value))
        }
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) { set(name, value) }
        set("Content-Type", request.contentType)
        set("Idempotency-Key", request.idempotencyKey)
        if let contentDigest { set(ContentDigest.headerName, contentDigest) }
        return fields
    }

    /// Changes the hop on the wire in place: the state lets go of it meanwhile, so its buffers
    /// (the answer kept so far) are not copied on every piece of the answer.
    @discardableResult
    private mutating func withTransfer<Result>(_ body: (inout Transfer) -> Result) -> Result? {
        guard case .transferring(var transfer) = state else { return nil }
        state = .idle
        defer { state = .transferring(transfer) }
        return body(&transfer)
    }

    private mutating func send(url: String, number: Int) -> Action {
        let hop = Hop(url: url, number: number, headers: HTTPAttempt.headers(request, contentDigest: contentDigest))
        state = .transferring(Transfer(hop: hop))
        return .send(hop)
    }

    private mutating func finish(_ outcome: UploadOutcome) -> Action {
        state = .finished
        return .finish(outcome)
    }

    /// The status and every byte its `Content-Length` announced arrived (a HEAD's length is the
    /// object's, never sent): the server's answer is whole.
    private func answerArrivedWhole(_ transfer: Transfer, status: Int) -> Bool {
        guard status >= 200, request.method != "HEAD", let length = transfer.head?.contentLength else { return false }
        return transfer.received == length
    }

    /// What a transfer's error means for the attempt.
    private func failure(_ error: TransferError, _ transfer: Transfer, now: Double) -> TransportFailure {
        if transfer.head == nil, transfer.received == 0 {
            let alert: Int? = if case .tlsAlert(let alert, _) = error { alert } else { transfer.handshake?.alert }
            if let reason = ClientCertificateRefusal.reason(alert: alert, handshake: transfer.handshake) {
                return .tlsRefused(reason)
            }
        }
        switch error {
        case .connectionRefused: return .connectionRefused
        case .hostNotFound: return .hostNotFound
        case .noNetwork: return .noNetwork
        case .tlsHandshake(let detail): return .tlsHandshake(detail)
        // An alert the rule above did not take (40 with no certificate asked for): the handshake failed.
        case .tlsAlert(_, let detail): return .tlsHandshake(detail)
        // libcurl's own timer is set to what is left of the deadline: near it, it is the deadline.
        case .timedOut: return now >= deadline - 0.05 ? .deadline(seconds: request.deadlineSeconds) : .idleTimeout
        case .connectionLost, .streamReset, .stoppedOnRequest: return .connectionLost
        case .badResponse(let detail): return .badResponse(detail)
        case .answerHeadTooLarge: return .answerHeadTooLarge
        case .unnamed(let text):
            let nothingWentOut = request.bodyLength != nil && transfer.bodySent == 0 && transfer.head == nil && transfer.received == 0
            return .unidentified(text, beforeSending: nothingWentOut)
        }
    }
}
