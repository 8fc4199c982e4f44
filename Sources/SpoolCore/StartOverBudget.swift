/// The rule both resumable uploads (an S3 multipart upload, a tus upload) keep when the server
/// lost their upload or it was made for another object: begin anew at most once per attempt. A
/// store that loses every upload must not keep one attempt going; the next attempt may try again.
public struct StartOverBudget: Equatable, Sendable {
    public private(set) var isSpent = false

    public init() {}

    /// Spends the attempt's one start-over. Nil when it may begin anew; otherwise the outcome
    /// that ends the attempt: the one that prompted this second start-over (without its body),
    /// or, with none, a retryable failure saying `detail`.
    public mutating func spend(after outcome: UploadOutcome?, detail: String) -> UploadOutcome? {
        guard isSpent else {
            isSpent = true
            return nil
        }
        return outcome?.withoutBody ?? .answered(HTTPAnswer(status: 0).ruled(.retryable, because: detail))
    }
}
