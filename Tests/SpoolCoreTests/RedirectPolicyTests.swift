import SpoolCore
import XCTest

final class RedirectPolicyTests: XCTestCase {
    private let from = "http://up.example:8080/in/a.txt"

    func testOrigin_defaultsPortsLowercasesHostAndDropsUserInfo() {
        XCTAssertEqual(HTTPOrigin("HTTPS://User:pw@Up.Example/x")?.description, "https://up.example:443")
        XCTAssertEqual(HTTPOrigin("http://[::1]:81/")?.description, "http://[::1]:81")
        XCTAssertNil(HTTPOrigin("ftp://x/"))
        XCTAssertNil(HTTPOrigin("/relative"))
        XCTAssertNil(HTTPOrigin("http://host:99999/"))
    }

    func test307And308SameOrigin_areFollowed() {
        let policy = RedirectPolicy()
        for status in [307, 308] {
            XCTAssertEqual(
                policy.decide(status: status, method: "PUT", from: from, location: "http://UP.example:8080/b", hopsSoFar: 0),
                .follow("http://UP.example:8080/b"))
        }
    }

    func testOtherPortOrHost_isRefused_unlessTheHostIsAllowed() {
        let other = "http://up.example:9090/b"
        guard case .refuse(let reason) = RedirectPolicy().decide(status: 307, method: "PUT", from: from, location: other, hopsSoFar: 0)
        else { return XCTFail("followed") }
        XCTAssertTrue(reason.contains("another origin"), reason)
        XCTAssertEqual(
            RedirectPolicy(allowedHosts: ["Up.Example"]).decide(status: 307, method: "PUT", from: from, location: other, hopsSoFar: 0),
            .follow(other))
    }

    func testMethodChangingRedirects_areRefused() {
        for status in [301, 302, 303] {
            guard case .refuse(let reason) = RedirectPolicy().decide(status: status, method: "POST", from: from, location: from, hopsSoFar: 0)
            else { return XCTFail("\(status) followed") }
            XCTAssertTrue(reason.contains("POST into GET"), reason)
        }
    }

    func testHttpsToHttp_tooManyHops_missingLocation_areRefused_andOther3xxAreNotRedirects() {
        let policy = RedirectPolicy(allowedHosts: ["up.example"])
        XCTAssertNotEqual(policy.decide(status: 307, method: "PUT", from: "https://up.example/a", location: "http://up.example/a", hopsSoFar: 0),
                          .follow("http://up.example/a"))
        XCTAssertNotEqual(policy.decide(status: 307, method: "PUT", from: from, location: from, hopsSoFar: RedirectPolicy.maximumHops),
                          .follow(from))
        XCTAssertEqual(policy.decide(status: 308, method: "PUT", from: from, location: nil, hopsSoFar: 0),
                       .refuse("redirect 308 without a Location header"))
        XCTAssertEqual(policy.decide(status: 304, method: "PUT", from: from, location: nil, hopsSoFar: 0), .notARedirect)
        XCTAssertEqual(policy.decide(status: 200, method: "PUT", from: from, location: nil, hopsSoFar: 0), .notARedirect)
    }

    func testRefusal_isFinal_andExplainsItself() {
        let outcome = UploadOutcome.refusal(.redirectRefused, "redirect 302 to /x not followed", status: 302)
        XCTAssertEqual(outcome.class, .final)
        XCTAssertEqual(outcome.summary, "HTTP 302: redirect 302 to /x not followed")
        XCTAssertEqual(outcome.errorText, "redirect 302 to /x not followed")
        var lifecycle = ItemLifecycle(location: ItemLocation(.pending, attempt: 0), notBefore: Timestamp(millisecondsSinceEpoch: 0))
        _ = lifecycle.claim()
        let action = lifecycle.finish(outcome, policy: RetryPolicy(), now: Timestamp(millisecondsSinceEpoch: 0), unitRandom: 0)
        guard case .fail(_, _, let reason) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(reason, FailureReason(.redirectRefused, "HTTP 302: redirect 302 to /x not followed"))
    }
}
