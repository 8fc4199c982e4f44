import SpoolCore
import XCTest

final class S3ErrorClassifierTests: XCTestCase {
    func answer(_ status: Int, _ code: String) -> UploadOutcome {
        .status(status, excerpt: "<?xml version=\"1.0\" encoding=\"UTF-8\"?> <Error><Code>\(code)</Code><Message>m</Message></Error>")
    }

    func testConfigurationProblems_pauseLikeAnOutage() {
        for code in ["InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "AccessDenied", "NoSuchBucket"] {
            let judged = S3ErrorClassifier.judge(answer(403, code))
            XCTAssertEqual(judged.class, .configuration, code)
            XCTAssertTrue(judged.summary.contains("S3 \(code): a configuration problem"), judged.summary)
        }
    }

    func testServerErrors_areRetried() {
        XCTAssertEqual(S3ErrorClassifier.judge(answer(500, "InternalError")).class, .retryable)
        XCTAssertEqual(S3ErrorClassifier.judge(answer(503, "ServiceUnavailable")).class, .retryable)
        XCTAssertEqual(S3ErrorClassifier.judge(answer(502, "Whatever")).class, .retryable)
    }

    /// S3's SlowDown and the other throttling codes ask for less whatever their status; a 503
    /// with a Retry-After stays throttling whatever its code.
    func testThrottlingCodes_areThrottled_whateverTheStatus() {
        for code in ["SlowDown", "SlowDownWrite", "SlowDownRead", "Throttling", "RequestLimitExceeded", "TooManyRequestsException"] {
            let judged = S3ErrorClassifier.judge(answer(503, code))
            XCTAssertEqual(judged.class, .throttled, code)
            XCTAssertEqual(judged.summary, "HTTP 503: S3 \(code)")
            XCTAssertEqual(S3ErrorClassifier.judge(answer(400, code)).class, .throttled, code)
        }
        var busy = answer(503, "ServiceUnavailable").answer!
        busy.retryAfterSeconds = 5
        XCTAssertEqual(S3ErrorClassifier.judge(busy).class, .throttled)
        XCTAssertEqual(S3ErrorClassifier.judge(.status(503, excerpt: "<Error/>")).class, .retryable, "a bare 503")
    }

    /// A multipart upload lost mid-attempt (an UploadPart answered 404 NoSuchUpload) is retried:
    /// the next attempt starts a new upload. By its status alone, a 404 would be final.
    func testLostMultipartUpload_isRetried_notFinal() {
        XCTAssertEqual(S3ErrorClassifier.judge(answer(404, "NoSuchUpload")).class, .retryable)
    }

    func testSkewedClock_isRetriedAndSaysSo() {
        let judged = S3ErrorClassifier.judge(answer(403, "RequestTimeTooSkewed"))
        XCTAssertEqual(judged.class, .retryable)
        XCTAssertTrue(judged.summary.contains("the clock is off"), judged.summary)
    }

    func testEntityTooLargeAndOtherClientErrors_areFinal() {
        XCTAssertEqual(S3ErrorClassifier.judge(answer(400, "EntityTooLarge")).class, .final)
        XCTAssertEqual(S3ErrorClassifier.judge(answer(400, "InvalidDigest")).class, .final)
        XCTAssertEqual(S3ErrorClassifier.judge(.status(404)).class, .final)
    }

    func testSuccessAndNetworkErrors_areLeftAlone() {
        XCTAssertEqual(S3ErrorClassifier.judge(.status(200, excerpt: "<Code>AccessDenied</Code>")).class, .success)
        XCTAssertEqual(S3ErrorClassifier.judge(.failed(.connectionRefused)).class, .outage)
    }

    func testErrorCode_takesOnlyAPlainToken() {
        XCTAssertEqual(S3ErrorClassifier.errorCode(in: "<Error><Code>NoSuchBucket</Code></Error>"), "NoSuchBucket")
        XCTAssertNil(S3ErrorClassifier.errorCode(in: "<Code>no such</Code>"))
        XCTAssertNil(S3ErrorClassifier.errorCode(in: "<Code>unterminated"))
        XCTAssertNil(S3ErrorClassifier.errorCode(in: nil))
    }
}
