import SpoolCore
import XCTest

final class OutcomeRulesTests: XCTestCase {
    func testStatusList_parsesCommaSeparatedAndRepeatedLists() throws {
        let list = try StatusList.parse(["404, 409", "403"])
        XCTAssertEqual(list.statuses, [403, 404, 409])
        XCTAssertEqual(list.text, "403,404,409")
        XCTAssertEqual(try StatusList.parse([]).statuses, [])
    }

    func testStatusList_refusesJunk_namingTheEntry() {
        let cases: [(String, String)] = [
            ("404,abc", "abc"), ("99", "99"), ("600", "600"), ("4O4", "4O4"), ("+404", "+404"),
            ("0404", "0404"), ("404.0", "404.0"), ("-1", "-1"), ("404,,409", "404,,409"), ("", ""),
            ("200", "200"), ("204", "204"),
        ]
        for (text, entry) in cases {
            XCTAssertThrowsError(try StatusList.parse([text]), text) { error in
                XCTAssertEqual((error as? StatusList.ParseError)?.entry, entry, text)
                XCTAssertTrue("\(error)".contains("'\(entry)'"), "\(error)")
            }
        }
    }

    func testDefaults_changeNothing() {
        let rules = OutcomeRules()
        for status in [200, 404, 409, 500, 503] {
            XCTAssertEqual(rules.judge(.status(status)).class, UploadOutcome.status(status).class, "\(status)")
        }
    }

    func testRetryOn_makesAFinalStatusRetryable_andFinalOn_theReverse() throws {
        let rules = OutcomeRules(retryOn: try StatusList.parse(["404,409"]), finalOn: try StatusList.parse(["501"]))
        XCTAssertEqual(rules.judge(.status(404)).class, .retryable)
        XCTAssertEqual(rules.judge(.status(409)).class, .retryable)
        XCTAssertEqual(rules.judge(.status(403)).class, .final, "not listed: default")
        XCTAssertEqual(rules.judge(.status(501)).class, .final)
        XCTAssertEqual(rules.judge(.status(502)).class, .retryable, "not listed: default")
        XCTAssertEqual(rules.judge(.failed(.connectionLost)).class, .retryable, "no status: default")
    }

    func testRefusal_staysFinal_evenIfItsStatusIsListed() throws {
        let rules = OutcomeRules(retryOn: try StatusList.parse(["301"]))
        XCTAssertEqual(rules.judge(.refusal(.redirectRefused, "redirect not followed", status: 301)).class, .final)
    }

    func testConflictingStatuses() throws {
        let rules = OutcomeRules(retryOn: try StatusList.parse(["404,409"]), finalOn: try StatusList.parse(["409,503"]))
        XCTAssertEqual(rules.conflictingStatuses, [409])
    }

    func testLifecycle_retriesAListedStatus_thenFailsAfterTheLastAttempt() throws {
        let rules = OutcomeRules(retryOn: try StatusList.parse(["404"]))
        let policy = RetryPolicy(maximumAttempts: 2)
        let t0 = Timestamp(millisecondsSinceEpoch: 0)
        var item = ItemLifecycle(location: ItemLocation(.pending, attempt: 0), notBefore: t0)
        _ = item.claim()
        guard case .requeue = item.finish(rules.judge(.status(404)), policy: policy, now: t0, unitRandom: 0) else {
            return XCTFail("404 with --retry-on 404 is retried")
        }
        _ = item.claim()
        guard case .fail(_, _, let reason) = item.finish(rules.judge(.status(404)), policy: policy, now: t0, unitRandom: 0) else {
            return XCTFail("the last attempt fails")
        }
        XCTAssertEqual(reason, FailureReason(.attemptsUsed, "HTTP 404 on attempt 2 of 2"))
    }
}
