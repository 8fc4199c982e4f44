/// Decides what an upload outcome means for the item: the rules of README "Outcomes".
public enum OutcomeClassifier {
    public static func classify(_ outcome: UploadOutcome) -> UploadOutcome.Class {
        if outcome.refusal != nil { return .final }
        if let status = outcome.httpStatus { return classify(status: status) }
        return outcome.failedBeforeSending ? .outage : .retryable
    }

    public static func classify(status: Int) -> UploadOutcome.Class {
        switch status {
        case 200..<300: .success
        case 408, 425, 429: .retryable
        case 500..<600: .retryable
        case 400..<500: .final
        default: .retryable  // 1xx/3xx that reached us unresolved, or nonsense: try again, bounded
        }
    }
}
