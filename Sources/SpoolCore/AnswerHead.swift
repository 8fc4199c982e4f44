/// What an attempt keeps of an answer's head: the headers that steer it.
public struct AnswerHead: Equatable, Sendable {
    public var retryAfter: String?
    public var location: String?
    public var etag: String?
    public var contentLength: Int64?

    public init(retryAfter: String? = nil, location: String? = nil, etag: String? = nil, contentLength: Int64? = nil) {
        (self.retryAfter, self.location, self.etag, self.contentLength) = (retryAfter, location, etag, contentLength)
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
        case .other: break
        }
    }
}
