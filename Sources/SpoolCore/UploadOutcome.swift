/// How one upload attempt (or one request of an S3 upload) ended, as the transport reports it:
/// one of four ways, each with only what that way has. Its class (`class`) follows from which.
public enum UploadOutcome: Equatable, Sendable {
    /// The server answered: its status, the headers spoold keeps, the answer's first bytes.
    case answered(HTTPAnswer)
    /// No answer: the request could not be sent, or its answer never came whole.
    case failed(TransportFailure)
    /// spoold refused to send the request or to go on with it (a header it cannot send, a
    /// redirect it will not follow, a blob that changed): final whatever the server said.
    case refused(UploadRefusal)
    /// Cancelled on request (`UploadTransport.cancelAll`, a second stop): no verdict on the item,
    /// so the engine hands the attempt back.
    case cancelled

    /// How the engine treats an outcome.
    public enum Class: String, Sendable, CaseIterable {
        /// 2xx: the item is done.
        case success
        /// Worth another attempt (5xx, 408, 425, a network error after the request went out).
        case retryable
        /// The server refused this item for good (other 4xx), or spoold did: straight to `failed/`.
        case final
        /// The endpoint could not be reached at all: the attempt is not the item's fault.
        case outage
        /// The endpoint asks the client for fewer requests (429, a 503 with `Retry-After`, S3's
        /// `SlowDown`): no verdict on the item, so the attempt is handed back, and the daemon's
        /// request rate is lowered (`AdaptiveRequestRate`).
        case throttled
        /// The endpoint refuses every upload for a reason of the daemon's configuration (S3
        /// credentials it does not accept, a bucket that does not exist, a TLS handshake refused
        /// for the client certificate): paused and probed like an outage, no attempt counted,
        /// until the operator mends it.
        case configuration

        /// Whether an attempt of this class is handed back uncounted: no verdict on the item.
        public var handsBack: Bool { self == .outage || self == .throttled || self == .configuration }
        /// Whether an attempt of this class pauses uploads and starts probing the endpoint.
        public var pausesUploads: Bool { self == .outage || self == .configuration }
    }

    /// An answer with `status` and nothing else kept (a test's, or a step's own verdict).
    public static func status(_ status: Int, excerpt: String? = nil) -> UploadOutcome {
        .answered(HTTPAnswer(status: status, excerpt: excerpt))
    }

    /// spoold refuses, for `code`, with `reason` in the history.
    public static func refusal(_ code: FailureCode, _ reason: String, status: Int? = nil, excerpt: String? = nil) -> UploadOutcome {
        .refused(UploadRefusal(code: code, reason: reason, status: status, excerpt: excerpt))
    }

    public var `class`: Class {
        switch self {
        case .answered(let answer): answer.class
        // A refused client certificate fails every upload alike: the configuration's fault.
        case .failed(let failure): failure.kind == .tlsRefused ? .configuration : failure.beforeSending ? .outage : .retryable
        case .refused: .final
        // No verdict; counted like a network error where the engine does not hand it back.
        case .cancelled: .retryable
        }
    }

    /// The answer, when the server gave one.
    public var answer: HTTPAnswer? {
        if case .answered(let answer) = self { return answer }
        return nil
    }

    /// The status the server answered with (a refused redirect's too), nil without an answer.
    public var httpStatus: Int? {
        switch self {
        case .answered(let answer): answer.status
        case .refused(let refusal): refusal.status
        case .failed, .cancelled: nil
        }
    }

    /// The first bytes of the answer's body, sanitised to one printable line.
    public var responseExcerpt: String? {
        switch self {
        case .answered(let answer): answer.excerpt
        case .refused(let refusal): refusal.excerpt
        case .failed, .cancelled: nil
        }
    }

    /// Seconds from the answer's `Retry-After`.
    public var retryAfterSeconds: Double? { answer?.retryAfterSeconds }

    public var isCancelled: Bool { self == .cancelled }

    /// One line for logs and the attempt history.
    public var summary: String {
        switch self {
        case .answered(let answer): answer.ruleFailure.map { "HTTP \(answer.status): \($0)" } ?? "HTTP \(answer.status)"
        case .failed(let failure): failure.text
        case .refused(let refusal): refusal.status.map { "HTTP \($0): \(refusal.reason)" } ?? refusal.reason
        case .cancelled: "cancelled"
        }
    }

    /// The error text kept in the attempt history: the refusal, the unmet success rule or the
    /// network error.
    public var errorText: String? {
        switch self {
        case .answered(let answer): answer.ruleFailure
        case .failed(let failure): failure.text
        case .refused(let refusal): refusal.reason
        case .cancelled: "cancelled"
        }
    }

    /// The code kept in the attempt history beside the error text (`code`), read by tools: the
    /// failure's kind or the refusal's code; nil for an answer, whose status says it.
    public var code: String? {
        switch self {
        case .answered: nil
        case .failed(let failure): failure.kind.rawValue
        case .refused(let refusal): refusal.code.rawValue
        case .cancelled: "cancelled"
        }
    }

    /// The outcome without the answer's kept body (`HTTPAnswer.body`), once no rule needs it.
    public var withoutBody: UploadOutcome {
        guard case .answered(var answer) = self else { return self }
        answer.body = nil
        return .answered(answer)
    }

    /// The outcome with its texts passed through `transform` (redaction of secrets).
    public func mapTexts(_ transform: (String) -> String) -> UploadOutcome {
        switch self {
        case .answered(var answer):
            answer.excerpt = answer.excerpt.map(transform)
            answer.ruleFailure = answer.ruleFailure.map(transform)
            return .answered(answer)
        case .failed(var failure):
            failure.text = transform(failure.text)
            return .failed(failure)
        case .refused(var refusal):
            refusal.reason = transform(refusal.reason)
            refusal.excerpt = refusal.excerpt.map(transform)
            return .refused(refusal)
        case .cancelled:
            return self
        }
    }
}
