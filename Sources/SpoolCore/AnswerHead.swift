/// What an attempt keeps of an answer's head: the headers that steer it.
public struct AnswerHead: Equatable, Sendable {
    public var retryAfter: String?
    public var location: String?
    public var etag: String?
    public var contentLength: Int64?
    /// The tus headers, when the answer has any.
    public var tus: TusHeaders?

    public init(
        retryAfter: String? = nil, location: String? = nil, etag: String? = nil, contentLength: Int64? = nil, tus: TusHeaders? = nil
    ) {
        (self.retryAfter, self.location, self.etag, self.contentLength) = (retryAfter, location, etag, contentLength)
        self.tus = tus
    }

    /// Takes one header line (libcurl hands them one at a time); a status line starts a new head
    /// (after `100 Continue`, the final answer's).
    public mutating func take(_ line: AnswerHeaderLine) {
        switch line {
        case .statusLine: self = AnswerHead()
        case .retryAfter(let value): retryAfter = value
        case .location(let value): location = value
        case .etag(let value): etag = value
        case .contentLength(let value): contentLength = Int64(value)
        case .tus(let field, let value):
            var headers = tus ?? TusHeaders()
            headers[field] = value
            tus = headers
        case .other: break
        }
    }
}
