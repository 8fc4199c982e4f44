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
        XCTAssertEqual(UploadOutcome(httpStatus: 503, retryAfterSeconds: 0).class, .throttled)
        XCTAssertEqual(UploadOutcome(httpStatus: 503, retryAfterSeconds: 30).class, .throttled)
        XCTAssertEqual(UploadOutcome(httpStatus: 503).class, .retryable)
        XCTAssertEqual(UploadOutcome(httpStatus: 429).class, .throttled)
        XCTAssertEqual(UploadOutcome(httpStatus: 500, retryAfterSeconds: 30).class, .retryable, "other statuses keep their class")
        XCTAssertEqual(UploadOutcome(httpStatus: 502, retryAfterSeconds: 30).class, .retryable)
    }

    /// `--retry-on 429` and `--final-on 503` still win: an operator can make a throttle count.
    func testRules_winOverThrottling() {
        let rules = OutcomeRules(retryOn: try! StatusList.parse(["429"]), finalOn: try! StatusList.parse(["503"]))
        XCTAssertEqual(rules.judge(.status(429)).class, .retryable)
        XCTAssertEqual(rules.judge(UploadOutcome(httpStatus: 503, retryAfterSeconds: 5)).class, .final)
        XCTAssertEqual(OutcomeRules().judge(.status(429)).class, .throttled)
    }

    func testNetworkError_beforeSendingIsAnOutage_afterIsRetryable() {
        XCTAssertEqual(UploadOutcome.network("connection refused", beforeSending: true).class, .outage)
        XCTAssertEqual(UploadOutcome.network("connection reset", beforeSending: false).class, .retryable)
        XCTAssertEqual(UploadOutcome.network("timed out").class, .retryable)
    }

    func testStatus_winsOverNetworkFlags() {
        XCTAssertEqual(UploadOutcome(httpStatus: 200, networkError: "x", failedBeforeSending: true).class, .success)
        XCTAssertEqual(UploadOutcome(httpStatus: 404, failedBeforeSending: true).class, .final)
    }

    func testSummary() {
        XCTAssertEqual(UploadOutcome.status(503).summary, "HTTP 503")
        XCTAssertEqual(UploadOutcome.network("connection refused").summary, "connection refused")
        XCTAssertEqual(UploadOutcome().summary, "unknown error")
    }
}
