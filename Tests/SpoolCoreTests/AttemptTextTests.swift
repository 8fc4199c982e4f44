import Foundation
import SpoolCore
import XCTest

/// The pure parts of an attempt that replaced Foundation in the transports: checked against
/// Foundation itself where it had the answer.
final class AttemptTextTests: XCTestCase {
    /// A redirect's Location resolved as Foundation's `URL(string:relativeTo:)` resolves it.
    func testURLReference_resolvesLikeFoundation() {
        let base = "http://up.example:8080/in/dir/a.bin?q=1"
        let references = [
            "https://other.example/x", "//cdn.example/y", "/abs/path", "rel/path", "../up/one", "./same", "?only=query",
            "#frag", "../../../../too/far", "a/./b/../c", "/a/b/../../c/", "HTTP://UP.example/Case",
        ]
        for reference in references {
            let expected = URL(string: reference, relativeTo: URL(string: base))?.absoluteURL.absoluteString
            XCTAssertEqual(URLReference.resolve(reference, against: base), expected, "'\(reference)'")
        }
        XCTAssertNil(URLReference.resolve("/x", against: "no-scheme/here"))
    }

    /// Retry-After as delta seconds or any of HTTP's three date forms (RFC 9110 section 5.6.7).
    func testRetryAfter_secondsAndDates() {
        let now = CivilTime(year: 2026, month: 11, day: 6, hour: 8, minute: 49, second: 7, millisecond: 0).timestamp
        XCTAssertEqual(RetryAfter.seconds(from: " 120 ", now: now), 120)
        XCTAssertEqual(RetryAfter.seconds(from: "Fri, 06 Nov 2026 08:49:37 GMT", now: now), 30)
        XCTAssertEqual(RetryAfter.seconds(from: "Friday, 06-Nov-26 08:49:47 GMT", now: now), 40)
        XCTAssertEqual(RetryAfter.seconds(from: "Fri Nov  6 08:49:57 2026", now: now), 50)
        XCTAssertEqual(RetryAfter.seconds(from: "Thu, 05 Nov 2026 08:49:37 GMT", now: now), 0, "a date past is now")
        for junk in ["-5", "soon", "Fri, 06 Nov 2026 25:00:00 GMT", "Fri, 32 Nov 2026 08:00:00 GMT", "Fri, 06 Nov 2026 08:49:37 PST", ""] {
            XCTAssertNil(RetryAfter.seconds(from: junk, now: now), junk)
        }
    }

    /// The history's excerpt: 512 bytes at most, control characters as spaces, trimmed as
    /// Foundation's `.whitespaces` trims.
    func testExcerpt_isOnePrintableLine() {
        XCTAssertNil(AnswerExcerpt.line([UInt8]()))
        XCTAssertEqual(AnswerExcerpt.line(Array("  {\"error\":\n\t\"x\"}\r\n".utf8)), "{\"error\":  \"x\"}")
        XCTAssertEqual(AnswerExcerpt.line(Array("\u{00A0}caf\u{E9}\u{3000}".utf8)), "caf\u{E9}")
        XCTAssertEqual(AnswerExcerpt.line([UInt8](repeating: 65, count: 2000))?.count, 512)
        XCTAssertEqual(AnswerExcerpt.line([0xFF, 0x41]), "\u{FFFD}A")
    }
}
