import SpoolCore
import XCTest

final class JSONSuccessRuleTests: XCTestCase {
    private func found(_ path: String, _ json: String) throws -> JSONPathReader.Found {
        try JSONPathReader.value(at: path.isEmpty ? [] : path.split(separator: ".").map(String.init), in: Array(json.utf8))
    }

    func testReader_findsNestedValues_arrayIndexes_andMissingOnes() throws {
        let json = #"{"status": {"code": 500, "text": "bad"}, "items": [{"ok": true}, {"ok": false}], "n": null}"#
        XCTAssertEqual(try found("status.code", json), .scalar(.number(500)))
        XCTAssertEqual(try found("status.text", json), .scalar(.string("bad")))
        XCTAssertEqual(try found("status", json), .object)
        XCTAssertEqual(try found("items", json), .array)
        XCTAssertEqual(try found("items.1.ok", json), .scalar(.bool(false)))
        XCTAssertEqual(try found("items.0.ok", json), .scalar(.bool(true)))
        XCTAssertEqual(try found("n", json), .scalar(.null))
        XCTAssertEqual(try found("items.2.ok", json), .missing)
        XCTAssertEqual(try found("status.code.x", json), .missing, "a scalar in the way")
        XCTAssertEqual(try found("nope", json), .missing)
        XCTAssertEqual(try found("", " 42 "), .scalar(.number(42)))
        XCTAssertEqual(try found("a", #"{"a": 1, "a": 2}"#), .scalar(.number(2)), "the last duplicate wins")
        XCTAssertEqual(try found("k\u{e9}y", #"{"k\u00e9y": "\ud83d\ude00 \"q\" \\ \/"}"#), .scalar(.string("\u{1F600} \"q\" \\ /")))
        XCTAssertEqual(try found("x", "\u{FEFF}{\"x\": -1.5e2}"), .scalar(.number(-150)), "a BOM is skipped")
    }

    func testReader_refusesWhatIsNotStrictJSON() {
        let bad = [
            "", "   ", "<html>", "{", "{\"a\": 1,}", "[1, 2,]", "{'a': 1}", "{\"a\" 1}", "01", "1.", ".5", "-", "+1",
            "1e", "tru", "nul", "\"unterminated", "\"tab\there\"", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"",
            "{\"a\": 1} {\"b\": 2}", "// c\n1", "NaN", "1e999",
        ]
        for text in bad {
            XCTAssertThrowsError(try found("a", text), "\(text.debugDescription) is not JSON")
        }
        XCTAssertThrowsError(try JSONPathReader.value(at: ["a"], in: Array("{\"a\": \"".utf8) + [0xFF, 0x22, 0x7D]), "invalid UTF-8")
    }

    func testReader_capsNesting_insteadOfExhaustingTheStack() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertThrowsError(try found("a", deep)) { error in
            XCTAssertTrue("\(error)".contains("nested deeper than 64"), "\(error)")
        }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        XCTAssertEqual(try found("", ok), .array)
    }

    func testRule_parsesPathAndScalarValues() throws {
        XCTAssertEqual(try JSONSuccessRule.parse("status.code=200"), JSONSuccessRule(path: ["status", "code"], expected: .number(200)))
        XCTAssertEqual(try JSONSuccessRule.parse("ok=true").expected, .bool(true))
        XCTAssertEqual(try JSONSuccessRule.parse("err=null").expected, .null)
        XCTAssertEqual(try JSONSuccessRule.parse("state=ok").expected, .string("ok"), "a bare string")
        XCTAssertEqual(try JSONSuccessRule.parse(#"state="true""#).expected, .string("true"), "quoted: the string, not the boolean")
        XCTAssertEqual(try JSONSuccessRule.parse("a=b=c").expected, .string("b=c"), "split at the first =")
        XCTAssertEqual(try JSONSuccessRule.parse("date=2024-01-01").expected, .string("2024-01-01"))
        XCTAssertEqual(try JSONSuccessRule.parse("x=-2.5e1").expected, .number(-25))
        XCTAssertEqual(try JSONSuccessRule.parse("x=").expected, .string(""))
        for junk in ["status.code", "=200", "status..code=1", ".a=1", "a.=1", "a=[1]", "a={}", #"a="unterminated"#] {
            XCTAssertThrowsError(try JSONSuccessRule.parse(junk), junk)
        }
    }

    func testRule_failureNamesWhatTheAnswerHeld() throws {
        let rule = try JSONSuccessRule.parse("status.code=200")
        func failure(_ json: String, truncated: Bool = false) -> String? {
            rule.failure(body: Array(json.utf8), truncated: truncated, limit: 65536)
        }
        XCTAssertNil(failure(#"{"status": {"code": 200}}"#))
        XCTAssertNil(failure(#"{"status": {"code": 200.0}}"#), "numbers compare by value")
        XCTAssertEqual(failure(#"{"status": {"code": 500}}"#), "the answer's status.code is 500, not 200 (--success-json status.code=200)")
        XCTAssertEqual(failure(#"{"status": {"code": "200"}}"#), #"the answer's status.code is "200", not 200 (--success-json status.code=200)"#)
        XCTAssertEqual(failure(#"{"status": {}}"#), "the answer has no status.code (--success-json status.code=200)")
        XCTAssertEqual(failure(#"{"status": {"code": [200]}}"#), "the answer's status.code is an array, not 200 (--success-json status.code=200)")
        XCTAssertEqual(failure("<html>oops</html>"), "the answer is not JSON: invalid value at byte 0 (--success-json status.code=200)")
        XCTAssertEqual(failure(""), "the answer is empty, not JSON (--success-json status.code=200)")
        XCTAssertEqual(
            failure(#"{"status": {"code": 200}}"#, truncated: true),
            "the answer is larger than 64 KiB, so --success-json status.code=200 cannot be checked")
    }

    func testRules_judge_only2xxByTheBody_andDropTheBody() throws {
        let rules = OutcomeRules(successJSON: try JSONSuccessRule.parse("status.code=200"))
        var good = HTTPAnswer(status: 200)
        good.body = Array(#"{"status":{"code":200}}"#.utf8)
        XCTAssertEqual(rules.judge(.answered(good)).class, .success)
        XCTAssertNil(rules.judge(.answered(good)).answer?.body)
        var bad = HTTPAnswer(status: 200, excerpt: "x")
        bad.body = Array(#"{"status":{"code":500}}"#.utf8)
        let judged = rules.judge(.answered(bad))
        XCTAssertEqual(judged.class, .retryable)
        XCTAssertEqual(judged.summary, "HTTP 200: the answer's status.code is 500, not 200 (--success-json status.code=200)")
        XCTAssertEqual(judged.errorText, "the answer's status.code is 500, not 200 (--success-json status.code=200)")
        XCTAssertEqual(rules.judge(.status(404)).class, .final, "a non-2xx keeps its class")
        XCTAssertEqual(rules.judge(.status(200)).class, .retryable, "no body kept: not JSON")
        XCTAssertEqual(OutcomeRules().answerBytesNeeded, 0)
        XCTAssertEqual(rules.answerBytesNeeded, 65536)
    }
}
