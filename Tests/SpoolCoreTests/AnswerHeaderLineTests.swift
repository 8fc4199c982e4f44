import Foundation
import SpoolCore
import XCTest

final class AnswerHeaderLineTests: XCTestCase {
    private func parse(_ line: String) -> AnswerHeaderLine {
        Array(line.utf8).withUnsafeBufferPointer { AnswerHeaderLine($0) }
    }

    private func parse(_ bytes: [UInt8]) -> AnswerHeaderLine { bytes.withUnsafeBufferPointer { AnswerHeaderLine($0) } }

    func testStatusLines_startANewResponse() {
        XCTAssertEqual(parse("HTTP/1.1 100 Continue\r\n"), .statusLine)
        XCTAssertEqual(parse("HTTP/2 201\r\n"), .statusLine)
        XCTAssertEqual(parse("http/1.1 200 OK\r\n"), .other, "the status line's HTTP is upper case")
        XCTAssertEqual(parse("HTTP"), .other)
    }

    func testKeptHeaders_matchAnyASCIICase_andTheirValuesAreTrimmed() {
        XCTAssertEqual(parse("Retry-After: 120\r\n"), .retryAfter("120"))
        XCTAssertEqual(parse("RETRY-AFTER:\t Fri, 31 Dec 1999 23:59:59 GMT \r\n"), .retryAfter("Fri, 31 Dec 1999 23:59:59 GMT"))
        XCTAssertEqual(parse("location: /other/place?a=b:c\r\n"), .location("/other/place?a=b:c"))
        XCTAssertEqual(parse("ETag: \"abc\"\r\n"), .etag("\"abc\""))
        XCTAssertEqual(parse("etag:\r\n"), .etag(""))
        XCTAssertEqual(parse("ETag:   \r\n"), .etag(""))
        XCTAssertEqual(parse("Location:\u{00A0}/x\u{3000}\r\n"), .location("/x"), "Unicode white space is trimmed too")
        XCTAssertEqual(parse("ETag: a b \u{2028}"), .etag("a b"))
    }

    func testOtherLines_areIgnored() {
        XCTAssertEqual(parse("Content-Type: text/plain\r\n"), .other)
        XCTAssertEqual(parse("Retry-After : 5\r\n"), .other, "a space before the colon is part of the name")
        XCTAssertEqual(parse("Retry-Afterx: 5\r\n"), .other)
        XCTAssertEqual(parse("ETa: 5\r\n"), .other)
        XCTAssertEqual(parse("\r\n"), .other)
        XCTAssertEqual(parse("no colon here\r\n"), .other)
        XCTAssertEqual(parse([]), .other)
        XCTAssertEqual(parse([0x45, 0xD4, 0x61, 0x67, 0x3A, 0x31]), .other, "E\\xD4ag is not ETag")
    }

    func testValues_areCutAtTheLineLimit_andOddBytesReplaced() {
        let long = "Location: /" + String(repeating: "a", count: 10_000) + "\r\n"
        guard case .location(let value) = parse(long) else { return XCTFail("not a location") }
        XCTAssertEqual(value.utf8.count, AnswerHeaderLine.lengthLimit - "Location: ".utf8.count)
        XCTAssertEqual(parse(Array("ETag: a".utf8) + [0xFF] + Array("b\r\n".utf8)), .etag("a\u{FFFD}b"))
    }

    /// The trimmed set is Foundation's `.whitespacesAndNewlines`, which the transport used before.
    func testTrimming_isFoundationsWhitespacesAndNewlines() {
        var scalars = Array(0...0xFFFF)
        scalars += [0x1_0000, 0x1_F600, 0xE_0020, 0x10_FFFF]
        for value in scalars {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let padded = "\(scalar)\(scalar)x\(scalar)y\(scalar)"
            let expected = padded.trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertEqual(parse("ETag:" + padded), .etag(expected), "U+\(String(value, radix: 16))")
        }
    }
}
