/// What the endpoint says success is, beyond the default table of `OutcomeClassifier`:
/// statuses moved between the retryable and final classes (`--retry-on`, `--final-on`), and a
/// condition a 2xx answer's JSON body must meet (`--success-json`).
///
/// Applied once to each outcome as it arrives (`judge`), so the lifecycle, the history and the
/// logs all see the same class. A refusal by spoold itself (a redirect it will not follow) stays
/// final whatever the lists say.
public struct OutcomeRules: Equatable, Sendable {
    /// Statuses retried although the default table makes them final (e.g. 404 or 409 from an
    /// eventually consistent receiver).
    public var retryOn: StatusList
    /// Statuses final although the default table retries them (e.g. 501).
    public var finalOn: StatusList
    /// A 2xx answer is success only if its body satisfies this; otherwise the attempt is retryable.
    public var successJSON: JSONSuccessRule?

    public init(retryOn: StatusList = StatusList(), finalOn: StatusList = StatusList(), successJSON: JSONSuccessRule? = nil) {
        self.retryOn = retryOn
        self.finalOn = finalOn
        self.successJSON = successJSON
    }

    /// How much of each answer the transport must keep for these rules (0: none): a small text's
    /// cap (`SmallText`); a longer answer fails the rule.
    public var answerBytesNeeded: Int { successJSON == nil ? 0 : SmallText.maximumBytes }

    /// A status in both lists would have two classes.
    public var conflictingStatuses: [Int] { retryOn.statuses.intersection(finalOn.statuses).sorted() }

    /// The outcome with the class these rules give it.
    /// The body kept for the rules is dropped from the result.
    public func judge(_ outcome: UploadOutcome) -> UploadOutcome {
        guard case .answered(let answer) = outcome else { return outcome }
        var judged = answer
        judged.body = nil
        judged.bodyTruncated = false
        let status = answer.status
        if retryOn.contains(status) {
            judged.ruledClass = .retryable
        } else if finalOn.contains(status) {
            judged.ruledClass = .final
        } else if (200..<300).contains(status), let successJSON,
                  let failure = successJSON.failure(body: answer.body ?? [], truncated: answer.bodyTruncated, limit: SmallText.maximumBytes)
        {
            judged.ruledClass = .retryable
            judged.ruleFailure = failure
        }
        return .answered(judged)
    }
}
