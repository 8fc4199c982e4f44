/// Why an item ended in `failed/`, in a few classes an operator can act on: a server that
/// refuses (4xx), one that kept failing (5xx), a network that kept failing, or a bad item.
///
/// Read from the item's json: its `failureCode` (`FailureCode`), and for a failure the server or
/// the network decided, its last attempt (its status, or the code of what ended it). A json
/// written by a version before codes has only the words; `legacy` reads those, the one place
/// spoold still matches its own old phrasing.
public enum FailureClass: String, CaseIterable, Comparable, Sendable {
    case http4xx = "http 4xx"
    case http5xx = "http 5xx"
    /// Another status (a 3xx that was not followed, a 1xx) or a refusal of spoold's own.
    case httpOther = "http other"
    case network
    /// spoold refused to go on (a redirect to another host, a per-item URL not allowed).
    case refused
    /// spoold stopped or crashed during the last attempt.
    case interrupted
    case sidecar
    case blobMissing = "blob missing"
    case blobChanged = "blob changed"
    case metadata
    case other

    /// The class of one failed item, from its json's `failureCode` (or, in a json without one,
    /// its `failureReason`) and its last attempt (if any).
    public static func classify(failureCode: String?, failureReason: String?, lastAttempt: AttemptRecord?) -> FailureClass {
        guard let failureCode else { return legacy(failureReason: failureReason, lastAttempt: lastAttempt) }
        switch FailureCode(rawValue: failureCode) {
        case .sidecar: return .sidecar
        case .blobMissing: return .blobMissing
        case .blobChanged: return .blobChanged
        case .metadata: return .metadata
        case .interrupted: return .interrupted
        case .urlRefused, .headerRefused, .redirectRefused, .unsupported: return .refused
        case .serverRefused, .attemptsUsed: return lastAttempt.map(classify(attempt:)) ?? .other
        case .attemptLimit, nil: return .other
        }
    }

    /// The class of the attempt that decided the failure: its status, else what ended it.
    static func classify(attempt: AttemptRecord) -> FailureClass {
        if attempt.outcome == "interrupted" { return .interrupted }
        if let code = attempt.code, FailureCode(rawValue: code) != nil { return .refused }
        if let status = attempt.httpStatus {
            switch status {
            case 400...499: return .http4xx
            case 500...599: return .http5xx
            default: return .httpOther
            }
        }
        if attempt.code != nil || attempt.error != nil { return .network }
        return .other
    }

    /// A json written before `failureCode` existed: the reasons spoold wrote itself when it parked
    /// an item without (another) request win over an attempt that happened earlier.
    static func legacy(failureReason: String?, lastAttempt: AttemptRecord?) -> FailureClass {
        if let reason = failureReason {
            if reason.hasPrefix("sidecar ") { return .sidecar }
            if reason.hasPrefix("its payload") { return reason.contains("missing") ? .blobMissing : .blobChanged }
            if reason.hasPrefix("metadata") || reason.hasPrefix("its metadata") { return .metadata }
            if reason.hasPrefix("interrupted") { return .interrupted }
            if reason.hasPrefix("its url") || reason.hasPrefix("it names its own url") { return .refused }
        }
        guard let attempt = lastAttempt else { return .other }
        if attempt.outcome == "interrupted" { return .interrupted }
        if let status = attempt.httpStatus {
            if attempt.outcome == "final", attempt.error != nil { return .refused }
            switch status {
            case 400...499: return .http4xx
            case 500...599: return .http5xx
            default: return .httpOther
            }
        }
        if attempt.outcome == "final" { return .refused }
        if attempt.error != nil { return .network }
        return .other
    }

    public static func < (lhs: FailureClass, rhs: FailureClass) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
