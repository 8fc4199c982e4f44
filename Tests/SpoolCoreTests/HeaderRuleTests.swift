import SpoolCore
import XCTest

final class HeaderRuleTests: XCTestCase {
    func testValues_controlCharactersRefused_tabsSpacesAndUTF8Kept() {
        for value in ["a b\tc", "", "café ü", "x=1; y=\"2\"", "~!@#$%^&*()"] {
            XCTAssertNil(HeaderRule.valueProblem(value), value)
        }
        let refused: [(String, String)] = [
            ("a\rb", "carriage return (CR)"), ("a\nb", "line feed (LF)"), ("a\u{0}b", "NUL"), ("a\u{1B}b", "0x1B"),
            ("a\u{7F}b", "0x7F"), ("\u{1}", "0x1"),
        ]
        for (value, words) in refused {
            XCTAssertTrue(HeaderRule.valueProblem(value)?.contains(words) == true, "\(value.debugDescription): \(HeaderRule.valueProblem(value) ?? "nil")")
        }
    }

    func testNames_mustBeTokens_andNotSpooldsOwn() {
        XCTAssertNil(HeaderRule.problem(name: "X-Trace_id.1", value: "v"))
        XCTAssertEqual(HeaderRule.problem(name: "", value: "v"), "the name is empty")
        XCTAssertTrue(HeaderRule.problem(name: "Bad Name", value: "v")?.contains("a space") == true)
        XCTAssertTrue(HeaderRule.problem(name: "X:Y", value: "v")?.contains("':'") == true)
        XCTAssertTrue(HeaderRule.problem(name: "X\r\nHost", value: "v")?.contains("carriage return") == true)
        for name in ["Content-Length", "transfer-encoding", "HOST", "Idempotency-Key", "Connection", "Expect"] {
            XCTAssertTrue(HeaderRule.problem(name: name, value: "1")?.contains("itself") == true, name)
        }
        XCTAssertFalse(HeaderRule.isValid(name: "X", value: "a\u{0}b"))
        XCTAssertTrue(HeaderRule.isValid(name: "X", value: "a\tb"))
    }

    func testParse_trimsAndExplains() {
        XCTAssertEqual(try HeaderRule.parse("  X-A :  v 1 ").get(), HeaderRule.Field(name: "X-A", value: "v 1"))
        XCTAssertEqual(try HeaderRule.parse("X-A:v").get().value, "v")
        XCTAssertEqual(try HeaderRule.parse("X-A:").get().value, "")
        XCTAssertThrowsError(try HeaderRule.parse("no colon").get()) { XCTAssertTrue("\($0)".contains("Name: value")) }
        XCTAssertThrowsError(try HeaderRule.parse("X-A: secret\u{0}").get()) { error in
            XCTAssertTrue("\(error)".contains("NUL"))
            XCTAssertFalse("\(error)".contains("secret"), "the value is never in the message")
        }
    }

    func testRequestProblem_namesTheHeaderNeverTheValue() {
        XCTAssertNil(HeaderRule.requestProblem(headers: ["X-A": "1", "Authorization": "Bearer t"], contentType: "text/plain"))
        let type = HeaderRule.requestProblem(headers: [:], contentType: "text/plain\r\nHost: evil")
        XCTAssertEqual(type, "header Content-Type: the value contains a carriage return (CR)")
        let header = HeaderRule.requestProblem(headers: ["Authorization": "Bearer hunter2\n"], contentType: "x/y")
        XCTAssertEqual(header, "header Authorization: the value contains a line feed (LF)")
        XCTAssertEqual(
            HeaderRule.requestProblem(headers: ["X\nY": "v"], contentType: "x/y"),
            "header X\\nY: the name has a character a header name may not have (a line feed (LF))")
    }
}
