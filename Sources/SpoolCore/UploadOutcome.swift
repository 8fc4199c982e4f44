/// The result of one upload attempt, as the transport reports it.
public struct UploadOutcome: Equatable, Sendable {
    /// How the engine treats an outcome.
    public enum Class: String, Sendable {
        /// 2xx: the item is done.
        case success
        /// Worth another attempt (5xx, 408, 425, a network error after the request went out).
        case retryable
        /// The server refused this item for good (other 4xx): straight to `failed/`.
        case final
        /// The endpoint could not be reached at all: the attempt is not the item's fault.
        case outage
        /// The endpoint asks the client for fewer requests (429, a 503 with `Retry-After`, S3's
        /// `SlowDown`): no verdict on the item, so the attempt is handed back, and the daemon's
        /// request rate is lowered (`AdaptiveRequestRate`).
        case throttled
    }

    public var httpStatus: Int?
    /// Transport-level error (`connection refused`, `timed out`), nil when a response arrived.
    public var networkError: String?
    /// Whether the network error happened before any byte of the request was sent.
    public var failedBeforeSending: Bool
    public var responseExcerpt: String?
    /// The answer's first bytes, up to the transport's answer limit, kept only when a rule
    /// needs the body (`--success-json`); `OutcomeRules.judge` drops it.
    public var responseBody: [UInt8]?
    /// Whether the answer was longer than what `responseBody` kept.
    public var responseBodyTruncated = false
    /// The answer's `ETag` header: an S3 part's receipt, recorded in the part log.
    public var etag: String?
    /// The answer's `Content-Length` header: for a HEAD, the size of the object.
    public var contentLength: Int64?
    /// Seconds from a `Retry-After` header, already resolved against the response's time.
    public var retryAfterSeconds: Double?
    /// Why spoold itself refuses to go on with this item (a redirect it will not follow, a URL it
    /// may not use): the outcome is final whatever the status.
    public var refusal: String?
    /// The class the endpoint's rules (`OutcomeRules`: `--retry-on`, `--final-on`,
    /// `--success-json`) gave this outcome; nil means the default table of `OutcomeClassifier`.
    public var ruledClass: Class?
    /// Why the rules did not take a 2xx answer as success (`--success-json`), for the history.
    public var ruleFailure: String?
    /// The transport cancelled the upload because it was told to (`cancelAll`: a second stop,
    /// the end of `--max-time`'s grace): no answer about the item, so the engine hands the attempt
    /// back. Set only by `cancelled`.
    public private(set) var wasCancelled = false
    /// The spool could not make the attempt's progress durable (a part log's write or fsync
    /// failed): no answer about the item may be acknowledged, and the daemon stops
    /// (never a retry that trusts a second fsync). Set only by `spoolFailure`.
    public private(set) var spoolFailure: String?

    public init(
        httpStatus: Int? = nil, networkError: String? = nil, failedBeforeSending: Bool = false,
        responseExcerpt: String? = nil, retryAfterSeconds: Double? = nil
    ) {
        self.httpStatus = httpStatus
        self.networkError = networkError
        self.failedBeforeSending = failedBeforeSending
        self.responseExcerpt = responseExcerpt
        self.retryAfterSeconds = retryAfterSeconds
    }

    public static func status(_ code: Int, excerpt: String? = nil) -> UploadOutcome {
        UploadOutcome(httpStatus: code, responseExcerpt: excerpt)
    }

    public static func network(_ error: String, beforeSending: Bool = false) -> UploadOutcome {
        UploadOutcome(networkError: error, failedBeforeSending: beforeSending)
    }

    /// The answer's header section was more than libcurl reads (under both transports): a line
    /// over 100 KiB, or 300 KiB in all. libcurl stops there, holding no more, and calls the first
    /// case "out of memory", which spoold's memory is not. The request went out: retryable.
    public static let answerHeadTooLarge = UploadOutcome.network(
        "the answer's header section is larger than libcurl reads (a line over 100 KiB or 300 KiB in all; libcurl calls it 'out of memory')")

    /// The upload was cancelled on request (`UploadTransport.cancelAll`).
    public static var cancelled: UploadOutcome {
        var outcome = UploadOutcome.network("cancelled")
        outcome.wasCancelled = true
        return outcome
    }

    /// The spool failed under the attempt (`reason` names the file and the error): the engine
    /// stops instead of classing the attempt.
    public static func spoolFailure(_ reason: String) -> UploadOutcome {
        var outcome = UploadOutcome.network(reason)
        outcome.spoolFailure = reason
        return outcome
    }

    /// spoold refuses to send (or to follow) the request: final, with `reason` in the history.
    public static func refused(_ reason: String, status: Int? = nil, excerpt: String? = nil) -> UploadOutcome {
        var outcome = UploadOutcome(httpStatus: status, responseExcerpt: excerpt)
        outcome.refusal = reason
        return outcome
    }

    public var `class`: Class { ruledClass ?? OutcomeClassifier.classify(self) }

    /// One line for logs and the attempt history.
    public var summary: String {
        if let refusal {
            return httpStatus.map { "HTTP \($0): \(refusal)" } ?? refusal
        }
        if let status = httpStatus { return ruleFailure.map { "HTTP \(status): \($0)" } ?? "HTTP \(status)" }
        return networkError ?? "unknown error"
    }

    /// The error text kept in the attempt history: the refusal, the unmet success rule or the
    /// network error.
    public var errorText: String? {
        refusal ?? ruleFailure ?? (httpStatus == nil ? networkError : nil)
    }
}
