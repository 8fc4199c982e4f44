import SpoolCore
import XCTest

final class LogRedactionTests: XCTestCase {
    func testURLUserInfo_isRedacted_andNothingElseChanges() {
        XCTAssertEqual(LogRedaction.url("https://user:s3cret@example.org/up/"), "https://REDACTED@example.org/up/")
        XCTAssertEqual(LogRedaction.url("http://token@127.0.0.1:8080/x"), "http://REDACTED@127.0.0.1:8080/x")
        XCTAssertEqual(LogRedaction.url("https://example.org/a@b"), "https://example.org/a@b", "an @ in the path is not user info")
        XCTAssertEqual(LogRedaction.url("https://example.org/"), "https://example.org/")
        XCTAssertEqual(LogRedaction.url("not a url"), "not a url")
    }

    func testQueryValues_areRedacted_namesKept() {
        XCTAssertEqual(LogRedaction.url("http://127.0.0.1:8080/up/?token=s3cr3t"), "http://127.0.0.1:8080/up/?token=REDACTED")
        XCTAssertEqual(
            LogRedaction.url(
                "https://b.s3.example/k.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20261123%2Fus&X-Amz-Signature=abc123"),
            "https://b.s3.example/k.jpg?X-Amz-Algorithm=REDACTED&X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED")
        XCTAssertEqual(LogRedaction.url("http://h/x?bare&empty=&a=b=c"), "http://h/x?REDACTED&empty=&a=REDACTED")
        XCTAssertEqual(LogRedaction.url("http://u:p@h/x?a=1#frag=2"), "http://REDACTED@h/x?a=REDACTED#frag=REDACTED")
        XCTAssertEqual(LogRedaction.url("http://h/x?"), "http://h/x?")
        XCTAssertEqual(LogRedaction.url("http://h?a=1"), "http://h?a=REDACTED")
    }

    func testRedaction_isIdempotent() {
        let once = LogRedaction.url("https://u:p@h/x?t=1&s=2")
        XCTAssertEqual(LogRedaction.url(once), once)
        XCTAssertEqual(LogRedaction.urls(in: once), once)
    }

    func testURLsInText_areFoundAndRedacted_theSentenceKept() {
        XCTAssertEqual(
            LogRedaction.urls(in: "redirect 307 to https://o.example/x?sig=abc refused; allow it"),
            "redirect 307 to https://o.example/x?sig=REDACTED refused; allow it")
        XCTAssertEqual(
            LogRedaction.urls(in: "its url 'https://a:b@h/p?k=v' is refused"), "its url 'https://REDACTED@h/p?k=REDACTED' is refused")
        XCTAssertEqual(
            LogRedaction.urls(in: "(to http://h/?t=1), then http://g/?u=2."), "(to http://h/?t=REDACTED), then http://g/?u=REDACTED.")
        XCTAssertEqual(
            LogRedaction.urls(in: "a http://h/?next=http://i/?t=2 b"), "a http://h/?next=REDACTED b", "a URL inside a query is a value")
        XCTAssertEqual(LogRedaction.urls(in: "no scheme ://x?a=1 here"), "no scheme ://x?a=1 here")
        XCTAssertEqual(LogRedaction.urls(in: "plain text, 100% done?"), "plain text, 100% done?")
        XCTAssertEqual(LogRedaction.urls(in: "x\"http://h/?a=1\"y"), "x\"http://h/?a=REDACTED\"y")
    }

    /// The byte pre-check lets through only what the Character search then judges as before.
    func testMarkerSplitByACombiningMark_orCutShort_isNotAURL() {
        XCTAssertEqual(LogRedaction.urls(in: "x:\u{301}//h/?a=1"), "x:\u{301}//h/?a=1")
        XCTAssertEqual(LogRedaction.urls(in: "http:/\u{301}/h/?a=1"), "http:/\u{301}/h/?a=1")
        XCTAssertEqual(LogRedaction.urls(in: "ends with http:/"), "ends with http:/")
        XCTAssertEqual(LogRedaction.urls(in: "http://"), "http://")
        XCTAssertEqual(LogRedaction.urls(in: "caf\u{E9} https://h/?k=v"), "caf\u{E9} https://h/?k=REDACTED")
    }
}
