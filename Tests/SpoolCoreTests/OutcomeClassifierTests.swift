import SpoolCore
import XCTest

final class OutcomeClassifierTests: XCTestCase {
    func testStatusTable() {
        let table: [(Int, UploadOutcome.Class)] = [
            (200, .success), (201, .success), (204, .success), (299, .success),
            (400, .final), (401, .final), (403, .final), (404, .final), (409, .final), (413, .final), (422, .final), (499, .final),
            (408, .retryable), (425, .retryable), (429, .throttled),
            (500, .retryable), (502, .retryable), (503, .retryable), (504, .retryable), (599, .retryable),
            (100, .retryable), (301, .retryable), (399, .retryable), (600, .retryable), (0, .retryable),
        ]
        for (status, expected) in table {
            XCTAssertEqual(OutcomeClassifier.classify(status: status), expected, "HTTP \(status)")
            XCTAssertEqual(UploadOutcome.status(status).class, expected, "HTTP \(status)")
        }
    }

    /// A 503 that says when to come back asks for less, like a 429; a bare 503 cannot be told
    /// from a server failing this item, so it counts like a 500.
    func test503_isThrottling_onlyWithRetryAfter() {
        XCTAssertEqual(UploadOutcome.answered(HTTPAnswer(status: 503, retryAfterSeconds: 0)).class, .throttled)
        XCTAssertEqual(UploadOutcome.answered(HTTPAnswer(status: 503, retryAfterSeconds: 30)).class, .throttled)
        XCTAssertEqual(UploadOutcome.status(503).class, .retryable)
        XCTAssertEqual(UploadOutcome.status(429).class, .throttled)
        XCTAssertEqual(UploadOutcome.answered(HTTPAnswer(status: 500, retryAfterSeconds: 30)).class, .retryable, "other statuses keep their class")
        XCTAssertEqual(UploadOutcome.answered(HTTPAnswer(status: 502, retryAfterSeconds: 30)).class, .retryable)
    }

    /// `--retry-on 429` and `--final-on 503` still win: an operator can make a throttle count.
    func testRules_winOverThrottling() {
        let rules = OutcomeRules(retryOn: try! StatusList.parse(["429"]), finalOn: try! StatusList.parse(["503"]))
        XCTAssertEqual(rules.judge(.status(429)).class, .retryable)
        XCTAssertEqual(rules.judge(UploadOutcome.answered(HTTPAnswer(status: 503, retryAfterSeconds: 5))).class, .final)
        XCTAssertEqual(OutcomeRules().judge(.status(429)).class, .throttled)
    }

    func testNetworkError_beforeSendingIsAnOutage_afterIsRetryable() {
        XCTAssertEqual(UploadOutcome.failed(.connectionRefused).class, .outage)
        XCTAssertEqual(UploadOutcome.failed(.tlsHandshake("certificate expired")).class, .outage)
        XCTAssertEqual(UploadOutcome.failed(.connectionLost).class, .retryable)
        XCTAssertEqual(UploadOutcome.failed(.idleTimeout).class, .retryable)
        XCTAssertEqual(UploadOutcome.failed(.deadline(seconds: 30)).class, .retryable)
        XCTAssertEqual(UploadOutcome.failed(.unidentified("odd", beforeSending: true)).class, .outage)
    }

    /// spoold's refusals are final whatever the status; a cancel is no verdict.
    func testRefusal_isFinal_cancelIsNoVerdict() {
        XCTAssertEqual(UploadOutcome.refusal(.redirectRefused, "redirect 301 not followed", status: 301).class, .final)
        XCTAssertEqual(UploadOutcome.refusal(.blobChanged, "its payload shrank").class, .final)
        XCTAssertEqual(UploadOutcome.cancelled.class, .retryable)
        XCTAssertTrue(UploadOutcome.Class.configuration.handsBack)
        XCTAssertTrue(UploadOutcome.Class.configuration.pausesUploads)
        XCTAssertFalse(UploadOutcome.Class.throttled.pausesUploads)
    }

    /// The attempt history's code: the failure's kind or the refusal's code, none for an answer.
    func testCode_isTheKindOrTheRefusal_noneForAnAnswer() {
        XCTAssertNil(UploadOutcome.status(500).code)
        XCTAssertEqual(UploadOutcome.failed(.connectionLost).code, "connection_lost")
        XCTAssertEqual(UploadOutcome.failed(.deadline(seconds: 0.5)).code, "deadline")
        XCTAssertEqual(UploadOutcome.refusal(.headerRefused, "not sent").code, "header_refused")
    }

    func testSummary() {
        XCTAssertEqual(UploadOutcome.status(503).summary, "HTTP 503")
        XCTAssertEqual(UploadOutcome.failed(.connectionRefused).summary, "connection refused")
        XCTAssertEqual(UploadOutcome.failed(.deadline(seconds: 0.5)).summary, "no complete answer within the 0.5 s deadline (--timeout)")
        XCTAssertEqual(UploadOutcome.failed(.deadline(seconds: 30)).summary, "no complete answer within the 30 s deadline (--timeout)")
        XCTAssertEqual(UploadOutcome.cancelled.summary, "cancelled")
    }
}
