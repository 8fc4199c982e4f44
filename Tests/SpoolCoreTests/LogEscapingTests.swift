import SpoolCore
import XCTest

final class LogEscapingTests: XCTestCase {
    func testControlCharacters_areEscaped_soATextStaysOneLine() {
        XCTAssertEqual(LogEscaping.line("a\nb"), "a\\nb")
        XCTAssertEqual(LogEscaping.line("a\r\nb\tc"), "a\\r\\nb\\tc")
        XCTAssertEqual(LogEscaping.line("\u{1b}[31mred"), "\\x1b[31mred")
        XCTAssertEqual(LogEscaping.line("nul\u{0}del\u{7f}"), "nul\\x00del\\x7f")
        XCTAssertEqual(LogEscaping.line("csi\u{9b}nel\u{85}"), "csi\\u{9b}nel\\u{85}")
        XCTAssertEqual(LogEscaping.line("ls\u{2028}ps\u{2029}"), "ls\\u{2028}ps\\u{2029}")
    }

    func testPrintableText_isKeptAsItIs() {
        for text in ["", "plain", "naïve résumé ünïcode 🦊", "back\\slash", "100%;done.csv", "a;b=c&d?e#f"] {
            XCTAssertEqual(LogEscaping.line(text), text)
        }
    }
}
