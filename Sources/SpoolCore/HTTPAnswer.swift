/// The server's answer to one request: its status and what spoold keeps of it.
public struct HTTPAnswer: Equatable, Sendable {
    public var status: Int
    /// The first bytes of the answer's body as one printable line (`AnswerExcerpt`).
    public var excerpt: String?
    /// The answer's first bytes, up to what the request asked to keep, only when a rule needs the
    /// body (`--success-json`, an S3 step's XML); `OutcomeRules.judge` drops it.
    public var body: [UInt8]?
    /// Whether the answer was longer than what `body` kept.
    public var bodyTruncated = false
    /// The answer's `ETag` header: an S3 part's receipt, recorded in the part log.
    public var etag: String?
    /// The answer's `Content-Length` header: for a HEAD, the size of the object.
    public var contentLength: Int64?
    /// The answer's `Location` header, for a 2xx only: a tus creation's upload URL (a redirect's
    /// is the attempt's business, never the answer's).
    public var location: String?
    /// The tus headers of the answer, when it has any (`TusHeaders`).
    public var tus: TusHeaders?
    /// Seconds from a `Retry-After` header, already resolved against the answer's time.
    public var retryAfterSeconds: Double?
    /// The class the endpoint's rules gave this answer (`OutcomeRules`: `--retry-on`,
    /// `--final-on`, `--success-json`; an S3 error code; an S3 step's own check); nil means the
    /// default table of `OutcomeClassifier`.
    public var ruledClass: UploadOutcome.Class?
    /// Why the rules did not take the answer as it stands (for the history): an unmet
    /// `--success-json`, S3's error code.
    public var ruleFailure: String?

    public init(status: Int, excerpt: String? = nil, retryAfterSeconds: Double? = nil) {
        self.status = status
        self.excerpt = excerpt
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var `class`: UploadOutcome.Class { ruledClass ?? OutcomeClassifier.classify(self) }

    /// The answer, ruled `ruledClass` by a check of spoold's own, with why.
    public func ruled(_ ruledClass: UploadOutcome.Class, because reason: String) -> HTTPAnswer {
        var ruled = self
        ruled.ruledClass = ruledClass
        ruled.ruleFailure = reason
        return ruled
    }
}
