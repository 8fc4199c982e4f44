/// Decides what an answer's status means for the item: the rules of docs/http.md "Outcomes".
public enum OutcomeClassifier {
    public static func classify(_ answer: HTTPAnswer) -> UploadOutcome.Class {
        // A 503 that says when to come back is the server asking for less, like a 429; a bare
        // 503 cannot be told from a server failing this item, so it is retried and counted.
        if answer.status == 503, answer.retryAfterSeconds != nil { return .throttled }
        return classify(status: answer.status)
    }

    public static func classify(status: Int) -> UploadOutcome.Class {
        switch status {
        case 200..<300: .success
        case 429: .throttled
        case 408, 425: .retryable
        case 500..<600: .retryable
        case 400..<500: .final
        default: .retryable  // 1xx/3xx that reached us unresolved, or nonsense: try again, bounded
        }
    }
}
