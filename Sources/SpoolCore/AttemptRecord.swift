/// What happened on one upload attempt, kept in the item's json so `failed/` explains itself.
public struct AttemptRecord: Codable, Equatable, Sendable {
    public var number: Int
    public var startedAt: String
    public var finishedAt: String?
    /// `success`, `retryable`, `final` or `interrupted`: see `UploadOutcome.Class` (`outage`,
    /// `throttled` and `configuration` attempts are handed back and leave no entry).
    public var outcome: String
    public var httpStatus: Int?
    /// A one-line, operator-readable error (`HTTP 500 Internal Server Error`, `connection refused`).
    public var error: String?
    /// The first bytes of the response body, sanitised to printable text.
    public var responseExcerpt: String?
    /// What ended the attempt, as a code tools read beside `error`: a `TransportFailure.Kind`
    /// (`connection_refused`, `deadline`...), a `FailureCode` of spoold's refusal
    /// (`redirect_refused`, `blob_changed`...), `cancelled`, or `interrupted`; absent for an answer,
    /// whose `httpStatus` says it, and in entries written by versions before it was added.
    public var code: String?

    public init(
        number: Int, startedAt: Timestamp, finishedAt: Timestamp?, outcome: String,
        httpStatus: Int? = nil, error: String? = nil, responseExcerpt: String? = nil, code: String? = nil
    ) {
        self.number = number
        self.startedAt = startedAt.iso8601
        self.finishedAt = finishedAt?.iso8601
        self.outcome = outcome
        self.httpStatus = httpStatus
        self.error = error
        self.responseExcerpt = responseExcerpt
        self.code = code
    }

    /// Whether this attempt ended with an outcome (`success`, `retryable`, `final`), as opposed to
    /// `interrupted` (or a word this version does not know, counted the same way: that budget is
    /// the larger one). `outage` and `throttled` attempts are handed back and never enter the history.
    public var isAnswered: Bool {
        switch UploadOutcome.Class(rawValue: outcome) {
        case .success, .retryable, .final: true
        case .outage, .throttled, .configuration, nil: false
        }
    }
}
