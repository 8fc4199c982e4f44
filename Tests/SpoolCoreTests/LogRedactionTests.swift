import SpoolCore
import XCTest

final class LogRedactionTests: XCTestCase {
    func testURLUserInfo_isMasked_andNothingElseChanges() {
        XCTAssertEqual(LogRedaction.url("https://user:s3cret@example.org/up/"), "https://***@example.org/up/")
        XCTAssertEqual(LogRedaction.url("http://token@127.0.0.1:8080/x?a=b@c"), "http://***@127.0.0.1:8080/x?a=b@c")
        XCTAssertEqual(LogRedaction.url("https://example.org/a@b"), "https://example.org/a@b", "an @ in the path is not user info")
        XCTAssertEqual(LogRedaction.url("https://example.org/"), "https://example.org/")
        XCTAssertEqual(LogRedaction.url("not a url"), "not a url")
    }
}
