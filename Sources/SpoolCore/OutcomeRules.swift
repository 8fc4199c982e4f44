/// What the endpoint says success is, beyond the default table of `OutcomeClassifier`:
/// statuses moved between the retryable and final classes (`--retry-on`, `--final-on`).
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

    public init(retryOn: StatusList = StatusList(), finalOn: StatusList = StatusList()) {
        self.retryOn = retryOn
        self.finalOn = finalOn
    }

    /// A status in both lists would have two classes.
    public var conflictingStatuses: [Int] { retryOn.statuses.intersection(finalOn.statuses).sorted() }

    /// The outcome with the class these rules give it.
    public func judge(_ outcome: UploadOutcome) -> UploadOutcome {
        var judged = outcome
        guard outcome.refusal == nil, let status = outcome.httpStatus else { return judged }
        if retryOn.contains(status) {
            judged.ruledClass = .retryable
        } else if finalOn.contains(status) {
            judged.ruledClass = .final
        }
        return judged
    }
}
