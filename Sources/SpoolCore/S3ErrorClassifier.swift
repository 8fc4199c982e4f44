/// Classes an S3 answer by its error code (`<Code>` of the XML error body), not only its status.
///
/// Some codes mean every item would fail the same way (bad credentials, a missing bucket): those
/// are the configuration's (`UploadOutcome.Class.configuration`) and pause uploads like an outage, so no item burns its attempts on a configuration mistake, and
/// the daemon keeps probing until the operator fixes it.
public enum S3ErrorClassifier {
    /// Codes that are the configuration's fault, with what to check.
    public static let configurationProblems: [String: String] = [
        "InvalidAccessKeyId": "the access key id is unknown to the store",
        "SignatureDoesNotMatch": "the secret access key is wrong",
        "ExpiredToken": "the session token has expired",
        "InvalidToken": "the session token is invalid",
        "AccessDenied": "the credentials may not write to this bucket",
        "NoSuchBucket": "the bucket does not exist",
        "AuthorizationHeaderMalformed": "the region is wrong (--s3-region)",
    ]
    /// Codes that ask the client for fewer requests, whatever their status: S3's `SlowDown`
    /// (503), MinIO's `SlowDownWrite` and `SlowDownRead`, and the throttling codes the AWS SDKs'
    /// retry modes know, which gateways in front of a store may answer. No verdict on the item:
    /// the attempt is handed back and the daemon's request rate is lowered.
    public static let throttling: Set<String> = [
        "SlowDown", "SlowDownWrite", "SlowDownRead", "Throttling", "ThrottlingException", "ThrottledException",
        "RequestThrottled", "RequestThrottledException", "TooManyRequestsException", "RequestLimitExceeded",
        "BandwidthLimitExceeded",
    ]
    /// Codes worth another attempt whatever their status. `NoSuchUpload` (404) is a multipart
    /// upload the store lost in the middle of an attempt (restarted, aborted by a lifecycle
    /// rule): the next attempt finds it gone at ListParts and starts a new one.
    public static let retryable: Set<String> = ["InternalError", "ServiceUnavailable", "RequestTimeout", "NoSuchUpload"]
    /// Codes that are final whatever their status.
    public static let final: Set<String> = ["EntityTooLarge", "InvalidArgument", "KeyTooLongError", "InvalidBucketName"]

    /// The outcome with the class S3's error code gives it, and the code in its summary.
    public static func judge(_ outcome: UploadOutcome) -> UploadOutcome {
        guard case .answered(let answer) = outcome else { return outcome }
        return .answered(judge(answer))
    }

    /// The answer with the class S3's error code gives it, and the code in its summary.
    public static func judge(_ answer: HTTPAnswer) -> HTTPAnswer {
        guard !(200..<300).contains(answer.status), let code = errorCode(in: answer.excerpt) else { return answer }
        var judged = answer
        if let why = configurationProblems[code] {
            judged.ruledClass = .configuration
            judged.ruleFailure = "S3 \(code): a configuration problem (\(why))"
        } else if code == "RequestTimeTooSkewed" {
            judged.ruledClass = .retryable
            judged.ruleFailure = "S3 \(code): the clock is off (this machine's time differs too much from the store's)"
        } else if throttling.contains(code) {
            judged.ruledClass = .throttled
            judged.ruleFailure = "S3 \(code)"
        } else if retryable.contains(code) {
            // A 503 that says when to come back stays throttling, whatever its code.
            if OutcomeClassifier.classify(answer) != .throttled { judged.ruledClass = .retryable }
            judged.ruleFailure = "S3 \(code)"
        } else if final.contains(code) {
            judged.ruledClass = .final
            judged.ruleFailure = "S3 \(code)"
        } else {
            judged.ruleFailure = "S3 \(code)"
        }
        return judged
    }

    /// Whether a judged outcome is the store refusing the credentials (not a missing bucket or
    /// a wrong region): new credentials might be accepted.
    public static func refusesCredentials(_ outcome: UploadOutcome) -> Bool {
        guard case .answered(let answer) = outcome, answer.ruledClass == .configuration, let code = errorCode(in: answer.excerpt)
        else { return false }
        return credentialCodes.contains(code)
    }

    /// The configuration problems new credentials can solve.
    public static let credentialCodes: Set<String> = [
        "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "AccessDenied",
    ]

    /// The text of the first `<Code>…</Code>` in an answer, if it is a plain token.
    public static func errorCode(in body: String?) -> String? {
        guard let body, let open = body.firstRange(of: "<Code>") else { return nil }
        let rest = body[open.upperBound...]
        guard let close = rest.firstRange(of: "</Code>") else { return nil }
        let code = rest[..<close.lowerBound]
        guard !code.isEmpty, code.count <= 64, code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return String(code)
    }
}
