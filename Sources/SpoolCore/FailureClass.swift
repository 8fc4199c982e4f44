/// Why an item ended in `failed/`, in a few classes an operator can act on: a server that
/// refuses (4xx), one that kept failing (5xx), a network that kept failing, or a bad item.
///
/// Taken from the item's json: its last attempt when the reason came from the server or the
/// network (structured: the status and outcome), else the `failureReason` spoold itself wrote
/// when it parked the item without sending it (sidecar, payload, metadata).
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

    /// The class of one failed item, from its `failureReason` and its last attempt (if any).
    public static func classify(failureReason: String?, lastAttempt: AttemptRecord?) -> FailureClass {
        // Reasons spoold writes itself when it parks an item without (another) request; these win
        // over an attempt that happened earlier.
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
