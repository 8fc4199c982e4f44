/// spoold refusing to send a request or to go on with it: final, with a code tools read and a
/// reason people read.
public struct UploadRefusal: Equatable, Sendable {
    public var code: FailureCode
    public var reason: String
    /// The answer that made spoold refuse, if one did (a redirect it will not follow).
    public var status: Int?
    public var excerpt: String?

    public init(code: FailureCode, reason: String, status: Int? = nil, excerpt: String? = nil) {
        (self.code, self.reason, self.status, self.excerpt) = (code, reason, status, excerpt)
    }
}
