import SpoolCore
import XCTest

final class URLAllowListTests: XCTestCase {
    func testPrefixes_admitOnlyWhatTheySay() {
        let list = URLAllowList(["https://up.example/cams/", "https://api.example"])
        XCTAssertNil(list.refusal(for: "https://up.example/cams/7/a.jpg"))
        XCTAssertNil(list.refusal(for: "https://api.example"))
        XCTAssertNil(list.refusal(for: "https://api.example/v1?x=1"))
        XCTAssertNotNil(list.refusal(for: "https://api.example.evil.net/"), "a host prefix is not a host")
        XCTAssertNotNil(list.refusal(for: "https://up.example/admin"))
        XCTAssertNotNil(list.refusal(for: "http://up.example/cams/7"), "the scheme is part of the prefix")
    }

    func testSuspiciousURLs_areRefusedEvenUnderAPrefix() {
        let list = URLAllowList(["https://up.example/cams/"])
        for url in ["https://up.example/cams/../admin", "https://up.example/cams/%2E%2e/admin", "https://up.example/cams/./x",
                    "https://up.example/cams/a b", "https://up.example/cams/a\\b"] {
            XCTAssertNotNil(list.refusal(for: url), url)
        }
        XCTAssertNotNil(URLAllowList(["https://"]).refusal(for: "https://evil@up.example/cams/"))
    }

    func testNoPrefixes_refuseEveryItemURL() {
        XCTAssertTrue(URLAllowList([]).refusal(for: "https://up.example/x")?.contains("--allow-url") == true)
    }
}
