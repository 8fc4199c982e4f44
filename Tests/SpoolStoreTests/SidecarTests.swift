import SpoolCore
import SpoolStore
import XCTest

final class SidecarTests: XCTestCase {
    private func parse(_ text: String) throws -> Sidecar { try Sidecar.parse(Array(text.utf8)) }

    private func assertRejected(_ text: String, mentions words: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: line) { error in
            guard let error = error as? MetadataError else { return XCTFail("\(error)", file: file, line: line) }
            for word in words { XCTAssertTrue(error.description.contains(word), "\(error.description) lacks \(word)", file: file, line: line) }
        }
    }

    func testValidSidecar() throws {
        let s = try parse(#"{"contentType": "image/jpeg", "headers": {"X-Camera": "7"}, "fields": {"caption": "a fox"}}"#)
        XCTAssertEqual(s, Sidecar(contentType: "image/jpeg", headers: ["X-Camera": "7"], fields: ["caption": "a fox"]))
        XCTAssertEqual(try parse("{}"), Sidecar())
    }

    func testUnknownKey_isNamed() {
        assertRejected(#"{"contenttype": "x"}"#, mentions: ["unknown key", "contenttype", "allowed"])
    }

    func testWrongTypes() {
        assertRejected(#"{"contentType": 5}"#, mentions: ["contentType", "string"])
        assertRejected(#"{"contentType": ""}"#, mentions: ["contentType"])
        assertRejected(#"{"headers": ["a"]}"#, mentions: ["headers", "object"])
        assertRejected(#"{"fields": {"n": 1}}"#, mentions: ["fields.n", "string"])
        assertRejected(#"{"headers": {"X": null}}"#, mentions: ["headers.X"])
        assertRejected(#"[1, 2]"#, mentions: ["not a JSON object"])
        assertRejected(#"{"contentType": "#, mentions: ["not a JSON object"])
        assertRejected("", mentions: ["not a JSON object"])
    }

    func testBadHeaders() {
        assertRejected(#"{"headers": {"Bad Name": "v"}}"#, mentions: ["Bad Name", "not a valid HTTP header"])
        assertRejected(#"{"headers": {"X-Camera": "7", "x-camera": "8"}}"#, mentions: ["given twice"])
        assertRejected(#"{"headers": {"X-A": "line\r\nInjected: 1"}}"#, mentions: ["X-A"])
        assertRejected(#"{"headers": {"Host": "evil"}}"#, mentions: ["Host"])
        assertRejected(#"{"headers": {"idempotency-key": "k"}}"#, mentions: ["idempotency-key"])
    }

    func testOversize() {
        let big = #"{"fields": {"x": ""# + String(repeating: "a", count: SmallText.maximumBytes) + #""}}"#
        assertRejected(big, mentions: ["larger than \(SmallText.maximumBytes)"])
    }

    func testHeaderValues_breakingTheGrammar_areRefused_withWhy() {
        assertRejected(#"{"contentType": "text/plain\r\nHost: evil.example"}"#, mentions: ["contentType", "carriage return"])
        assertRejected(#"{"contentType": "a\u0000b"}"#, mentions: ["contentType", "NUL"])
        assertRejected(#"{"headers": {"X-A": "v\u001b[2J"}}"#, mentions: ["X-A", "0x1B"])
        assertRejected(#"{"headers": {"X\nB": "v"}}"#, mentions: ["X\\nB", "name"])
        XCTAssertEqual(try parse(#"{"contentType": "text/plain; charset=utf-8", "headers": {"X-A": "a\tb c"}}"#).headers, ["X-A": "a\tb c"])
    }

    func testMetadataCodec_roundTripsAndExplainsErrors() throws {
        var m = ItemMetadata(id: ItemID("20261121T141003123Z-0000-9f3ab2c1-a")!, originalName: "a b/ü", size: 3,
                             contentType: "text/plain", createdAt: Timestamp(millisecondsSinceEpoch: 0), headers: ["X": "1"])
        m.attempts.append(AttemptRecord(number: 1, startedAt: Timestamp(millisecondsSinceEpoch: 5), finishedAt: nil, outcome: "retryable", httpStatus: 503))
        XCTAssertEqual(try MetadataCodec.decode(MetadataCodec.encode(m)), m)
        XCTAssertThrowsError(try MetadataCodec.decode(Array(#"{"version": 1}"#.utf8))) { XCTAssertTrue("\($0)".contains("lacks the field"), "\($0)") }
        XCTAssertThrowsError(try MetadataCodec.decode(Array("nope".utf8))) { XCTAssertTrue("\($0)".contains("not valid JSON"), "\($0)") }
        var text = String(decoding: MetadataCodec.encode(m), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"size\" : 3", with: "\"size\" : \"3\"")
        XCTAssertThrowsError(try MetadataCodec.decode(Array(text.utf8))) { XCTAssertTrue("\($0)".contains("'size' has the wrong type"), "\($0)") }
    }
}
