import SpoolCore
import XCTest

final class QueueAgeShapeTests: XCTestCase {
    func testBucket_doublesFromOneMinute() {
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: -5), 0, "a future id counts as new")
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 0), 0)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 59.9), 0)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 60), 1)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 119), 1)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 120), 2)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 239), 2)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 240), 3)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 8 * 60), 4)
        XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: 1e12), QueueAgeShape.bucketCount - 1, "the last bucket is open")
    }

    func testLabels_matchTheBounds() {
        XCTAssertEqual(QueueAgeShape.label(ofBucket: 0), "0-1 min")
        XCTAssertEqual(QueueAgeShape.label(ofBucket: 1), "1-2 min")
        XCTAssertEqual(QueueAgeShape.label(ofBucket: 3), "4-8 min")
        XCTAssertEqual(QueueAgeShape.label(ofBucket: QueueAgeShape.bucketCount - 1), "16384+ min")
        for index in 1..<(QueueAgeShape.bucketCount - 1) {
            let (lower, upper) = QueueAgeShape.bounds(ofBucket: index)
            XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: Double(lower) * 60), index)
            XCTAssertEqual(QueueAgeShape.bucket(forAgeSeconds: Double(upper!) * 60 - 0.5), index)
        }
    }

    func testRows_endAtTheOldestNonEmptyBucket() {
        var shape = QueueAgeShape()
        XCTAssertEqual(shape.rows.count, 0)
        for age in [1.0, 30, 70, 600] { shape.add(ageSeconds: age) }
        XCTAssertEqual(shape.total, 4)
        XCTAssertEqual(shape.rows.map(\.count), [2, 1, 0, 0, 1], "0-1, 1-2, 2-4, 4-8, 8-16 min")
    }
}

final class FailureClassTests: XCTestCase {
    private func attempt(_ outcome: String, status: Int? = nil, error: String? = nil, code: String? = nil) -> AttemptRecord {
        AttemptRecord(number: 1, startedAt: Timestamp(millisecondsSinceEpoch: 0), finishedAt: nil, outcome: outcome,
                      httpStatus: status, error: error, code: code)
    }

    /// The code decides, never the words: a reason worded like another class (or in no words at
    /// all) is classed by its code, and the server's or the network's by the last attempt's
    /// status or code. A code from a newer version is `other`.
    func testCodes_decide_notTheWords() {
        func classify(_ code: FailureCode, _ words: String?, _ last: AttemptRecord? = nil) -> FailureClass {
            FailureClass.classify(failureCode: code.rawValue, failureReason: words, lastAttempt: last)
        }
        XCTAssertEqual(classify(.sidecar, "its payload is fine"), .sidecar)
        XCTAssertEqual(classify(.blobMissing, nil), .blobMissing)
        XCTAssertEqual(classify(.blobChanged, "sidecar-looking words"), .blobChanged)
        XCTAssertEqual(classify(.metadata, nil), .metadata)
        XCTAssertEqual(classify(.interrupted, nil), .interrupted)
        XCTAssertEqual(classify(.headerRefused, "metadata words"), .refused)
        XCTAssertEqual(classify(.redirectRefused, nil, attempt("final", status: 302, code: "redirect_refused")), .refused)
        XCTAssertEqual(classify(.urlRefused, nil), .refused)
        XCTAssertEqual(classify(.serverRefused, "its url words", attempt("final", status: 404)), .http4xx)
        XCTAssertEqual(classify(.attemptsUsed, nil, attempt("retryable", status: 503)), .http5xx)
        XCTAssertEqual(classify(.attemptsUsed, nil, attempt("retryable", error: "connection lost mid-request", code: "connection_lost")), .network)
        XCTAssertEqual(classify(.attemptsUsed, nil, attempt("retryable", status: 200, error: "the answer's status.code is 500")), .httpOther)
        XCTAssertEqual(classify(.attemptsUsed, nil, attempt("final", status: 200, code: "blob_changed")), .refused)
        XCTAssertEqual(classify(.attemptLimit, nil), .other)
        XCTAssertEqual(FailureClass.classify(failureCode: "from_a_newer_version", failureReason: "sidecar x", lastAttempt: nil), .other)
    }

    // A json written before codes existed: its words and its last attempt.

    func testServerAndNetworkFailures_comeFromTheLastAttempt() {
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "HTTP 400: the server refused the item", lastAttempt: attempt("final", status: 400)), .http4xx)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "HTTP 503 on attempt 3 of 3", lastAttempt: attempt("retryable", status: 503)), .http5xx)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "connection reset on attempt 3 of 3", lastAttempt: attempt("retryable", error: "connection reset")), .network)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "HTTP 307: redirect refused", lastAttempt: attempt("final", status: 307, error: "redirect refused")), .refused)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: nil, lastAttempt: attempt("final", status: 302)), .httpOther)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "interrupted on attempt 3 of 3 (spoold stopped mid-upload)", lastAttempt: attempt("interrupted", error: "x")), .interrupted)
    }

    func testReasonsSpooldWritesItself_winOverAnEarlierAttempt() {
        let earlier = attempt("retryable", status: 500)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "sidecar incoming/a.meta.json: bad", lastAttempt: nil), .sidecar)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "its payload pending/x.a1.blob is missing", lastAttempt: earlier), .blobMissing)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "its payload (.blob) was missing at start-up", lastAttempt: nil), .blobMissing)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "its payload changed size (3 B, spooled as 5 B)", lastAttempt: earlier), .blobChanged)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "metadata is not valid JSON", lastAttempt: nil), .metadata)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: "its url 'x' does not start with an --allow-url prefix", lastAttempt: nil), .refused)
        XCTAssertEqual(FailureClass.classify(failureCode: nil, failureReason: nil, lastAttempt: nil), .other)
    }
}
