import SpoolCore
import SpoolStore
import SpoolTestSupport
import XCTest

/// `ItemMetadataJSON` (the fast path) against Foundation's coder, which defines the format: the
/// same bytes written, the same metadata read, and Foundation's answer wherever the fast path
/// declines.
final class MetadataCodecTests: XCTestCase {
    private static let printableASCII = String((0x20...0x7E).map { Character(Unicode.Scalar(UInt8($0))) })

    private func item(_ name: String = "f000001.dat") -> ItemMetadata {
        ItemMetadata(
            id: ItemID("20261123T104559218Z-0000-e36a3dc0-f000001.dat")!, originalName: name, size: 4096,
            contentType: "application/octet-stream", createdAt: Timestamp(millisecondsSinceEpoch: 1_795_430_559_218))
    }

    /// Metadata the fast path writes: every field, optional or not, with printable ASCII.
    private var subset: [ItemMetadata] {
        var list = [item()]
        var full = item("dir/sub dir/\"quoted\" \\ back/slash.dat")
        full.headers = ["X-Tag": "a/b \"c\" \\d"]
        full.fields = ["k": "v"]
        full.originalNameBytes = "Y2Fm6S50eHQ="
        full.url = "https://example.org/up/x?a=b&c=d"
        full.failureReason = "gave up: HTTP 500"
        full.failureCode = "attempts_used"
        full.retriedAt = ["2026-11-23T10:00:00.000Z", "2026-11-23T11:00:00.000Z"]
        full.size = Int64.max
        full.version = -7
        full.attempts = [
            AttemptRecord(number: 1, startedAt: Timestamp(millisecondsSinceEpoch: 1), finishedAt: nil, outcome: "interrupted"),
            AttemptRecord(
                number: 2, startedAt: Timestamp(millisecondsSinceEpoch: 2), finishedAt: Timestamp(millisecondsSinceEpoch: 3),
                outcome: "retryable", httpStatus: 503, error: "HTTP 503 Service Unavailable",
                responseExcerpt: MetadataCodecTests.printableASCII),
            AttemptRecord(
                number: 2, startedAt: Timestamp(millisecondsSinceEpoch: 2), finishedAt: Timestamp(millisecondsSinceEpoch: 3),
                outcome: "retryable", error: "connection lost mid-request", code: "connection_lost"),
            AttemptRecord(number: 3, startedAt: Timestamp(millisecondsSinceEpoch: 4), finishedAt: nil, outcome: "final", httpStatus: 400),
            AttemptRecord(
                number: 4, startedAt: Timestamp(millisecondsSinceEpoch: 5), finishedAt: nil, outcome: "final",
                responseExcerpt: "only an excerpt"),
        ]
        list.append(full)
        var emptyRetried = item(MetadataCodecTests.printableASCII)
        emptyRetried.retriedAt = []
        emptyRetried.headers = ["": ""]
        list.append(emptyRetried)
        var negative = item("")
        negative.size = -1
        list.append(negative)
        return list
    }

    func testEncode_writesFoundationsBytes_andTakesTheFastPathForTheCommonCase() throws {
        for metadata in subset {
            XCTAssertNotNil(ItemMetadataJSON.encode(metadata), "\(metadata)")
            XCTAssertEqual(
                String(decoding: MetadataCodec.encode(metadata), as: UTF8.self),
                String(decoding: MetadataCodec.foundationEncode(metadata), as: UTF8.self))
        }
    }

    /// A field added to ItemMetadata or AttemptRecord would be left out by the fast path's
    /// hand-written encoder and ignored by its decoder: this fails first, so both learn it (and
    /// the `subset` fixture sets it).
    func testFastPath_knowsEveryStoredField() throws {
        let full = try XCTUnwrap(subset.dropFirst().first)
        XCTAssertEqual(
            Set(Mirror(reflecting: full).children.compactMap(\.label)),
            ["id", "originalName", "originalNameBytes", "size", "contentType", "createdAt", "headers", "fields", "url",
             "attempts", "failureReason", "failureCode", "retriedAt", "version"],
            "ItemMetadata changed: teach ItemMetadataJSON the new field, or make it decline metadata that has it")
        XCTAssertEqual(
            Set(Mirror(reflecting: full.attempts[1]).children.compactMap(\.label)),
            ["number", "startedAt", "finishedAt", "outcome", "httpStatus", "error", "responseExcerpt", "code"],
            "AttemptRecord changed: teach ItemMetadataJSON the new field, or make it decline records that have it")
    }

    func testEncode_leavesWhatItCannotWriteToFoundation() throws {
        var unicode = item("café/日本.txt")
        unicode.fields = ["a": "1"]
        var control = item("tab\there")
        control.url = "x"
        var twoHeaders = item()
        twoHeaders.headers = ["b": "1", "A": "2"]
        var twoFields = item()
        twoFields.fields = ["x1": "1", "X2": "2"]
        var oddExcerpt = item()
        oddExcerpt.attempts = [
            AttemptRecord(number: 1, startedAt: Timestamp(millisecondsSinceEpoch: 1), finishedAt: nil, outcome: "final", responseExcerpt: "\u{7F}")
        ]
        for metadata in [unicode, control, twoHeaders, twoFields, oddExcerpt] {
            XCTAssertNil(ItemMetadataJSON.encode(metadata), "\(metadata)")
            XCTAssertEqual(MetadataCodec.encode(metadata), MetadataCodec.foundationEncode(metadata))
            XCTAssertEqual(try MetadataCodec.decode(MetadataCodec.encode(metadata)), metadata)
        }
    }

    func testDecode_readsWhatEitherWrites_likeFoundation() throws {
        for metadata in subset {
            let bytes = MetadataCodec.foundationEncode(metadata)
            XCTAssertEqual(ItemMetadataJSON.decode(bytes), metadata)
            XCTAssertEqual(try MetadataCodec.foundationDecode(bytes), metadata)
        }
    }

    func testDecode_acceptsOtherLayouts_andUnicode_likeFoundation() throws {
        let documents = [
            #"{"version":1,"id":"i","originalName":"n","size":0,"contentType":"t","createdAt":"c","headers":{},"fields":{},"attempts":[]}"#,
            " \r\n\t{ \"attempts\" : [ ] , \"fields\" : { } , \"headers\" : { \"a\" : \"b\" , \"c\" : \"d\" } , \"version\" : 0 , "
                + "\"id\":\"i\",\"originalName\":\"caf\u{E9} \u{65E5}\u{672C} \u{1F600}\",\"size\":-12,\"contentType\":\"t\","
                + "\"createdAt\":\"c\",\"url\":null,\"failureReason\":null,\"retriedAt\":null,\"originalNameBytes\":null} \n",
            #"{"version":1,"id":"a\/b\\c\"d","originalName":"n","size":9,"contentType":"t","createdAt":"c","headers":{},"fields":{},"#
                + #""attempts":[{"number":1,"startedAt":"s","outcome":"final","httpStatus":null,"error":null,"finishedAt":null,"#
                + #""responseExcerpt":null},{"startedAt":"s","number":2,"outcome":"retryable","httpStatus":500}],"retriedAt":[]}"#,
        ]
        for document in documents {
            let bytes = Array(document.utf8)
            let fast = try XCTUnwrap(ItemMetadataJSON.decode(bytes), document)
            XCTAssertEqual(fast, try MetadataCodec.foundationDecode(bytes))
        }
    }

    /// Outside the subset the fast path declines, and `decode` answers exactly as Foundation:
    /// the same metadata or the same error.
    func testDecode_leavesEverythingElseToFoundation() throws {
        let valid = String(decoding: MetadataCodec.foundationEncode(item()), as: UTF8.self)
        func variant(_ from: String, _ to: String) -> String {
            XCTAssertTrue(valid.contains(from), from)
            return valid.replacingOccurrences(of: from, with: to)
        }
        let documents = [
            variant("\"size\" : 4096", "\"size\" : 4096.0"),
            variant("\"size\" : 4096", "\"size\" : 4.096e3"),
            variant("\"size\" : 4096", "\"size\" : 04096"),
            variant("\"size\" : 4096", "\"size\" : -0"),
            variant("\"size\" : 4096", "\"size\" : 99999999999999999999"),
            variant("\"size\" : 4096", "\"size\" : \"4096\""),
            variant("\"size\" : 4096", "\"size\" : null"),
            variant("\"size\" : 4096", "\"size\" : true"),
            variant("\"version\" : 1", "\"version\" : 1, \"version\" : 2"),
            variant("\"version\" : 1", "\"version\" : 1, \"extra\" : {\"deep\" : [1, 2.5, false]}"),
            variant("\"version\" : 1", "\"version\" : 1,"),
            variant("\"id\" : ", "\"\\u0069d\" : "),
            variant("\"originalName\" : \"f000001.dat\"", "\"originalName\" : \"f\\u00e9\""),
            variant("\"originalName\" : \"f000001.dat\"", "\"originalName\" : \"a\\nb\""),
            variant("\"originalName\" : \"f000001.dat\"", "\"originalName\" : \"a\tb\""),
            variant("\"originalName\" : \"f000001.dat\"", "\"originalName\" : \"\\ud83d\\ude00\""),
            variant("\"headers\" : {\n\n  }", "\"headers\" : {\"a\" : \"1\", \"a\" : \"2\"}"),
            variant("\"headers\" : {\n\n  }", "\"headers\" : {\"a\" : 1}"),
            variant("\"headers\" : {\n\n  }", "\"headers\" : null"),
            variant("\"attempts\" : [\n\n  ]", "\"attempts\" : [{\"number\" : 1}]"),
            variant("\"attempts\" : [\n\n  ]", "\"attempts\" : [{\"number\" : 1, \"startedAt\" : \"s\", \"outcome\" : \"o\", \"x\" : 1}]"),
            variant("\"attempts\" : [\n\n  ],\n", ""),
            valid + "x",
            valid + "{}",
            "\u{FEFF}" + valid,
            "[" + valid + "]",
            "",
            "{}",
        ]
        for document in documents {
            let bytes = Array(document.utf8)
            XCTAssertNil(ItemMetadataJSON.decode(bytes), document)
            XCTAssertEqual(answer { try MetadataCodec.decode(bytes) }, answer { try MetadataCodec.foundationDecode(bytes) }, document)
        }
        var invalidUTF8 = Array(valid.utf8)
        invalidUTF8[invalidUTF8.firstIndex(of: UInt8(ascii: "f"))!] = 0xC3
        XCTAssertNil(ItemMetadataJSON.decode(invalidUTF8))
        XCTAssertEqual(answer { try MetadataCodec.decode(invalidUTF8) }, answer { try MetadataCodec.foundationDecode(invalidUTF8) })
    }

    /// Damaged copies of real jsons (bytes changed, removed, doubled): whatever the fast path
    /// accepts, Foundation reads the same.
    func testDecode_neverAcceptsWhatFoundationReadsDifferently() throws {
        var generator = SeededRandom(state: 0x5eed)
        let originals = subset.map { MetadataCodec.foundationEncode($0) }
        let alphabet = Array("{}[]:,\" \\/0123456789-.eEnulltruefalse\nabc".utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]
        var accepted = 0
        for round in 0..<6_000 {
            var bytes = originals[round % originals.count]
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let at = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
            }
            guard let fast = ItemMetadataJSON.decode(bytes) else { continue }
            accepted += 1
            XCTAssertEqual(fast, try MetadataCodec.foundationDecode(bytes), String(decoding: bytes, as: UTF8.self))
        }
        XCTAssertGreaterThan(accepted, 100, "some damage leaves valid JSON (a digit or a letter changed)")
    }
}

/// What a decode answered, as text: the metadata or the error's message.
private func answer(_ decode: () throws -> ItemMetadata) -> String {
    do { return "ok \(try decode())" } catch { return "error \(error)" }
}
