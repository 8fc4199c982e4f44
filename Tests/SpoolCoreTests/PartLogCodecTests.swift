import SpoolCore
import XCTest

final class PartLogCodecTests: XCTestCase {
    let upload = PartLogCodec.State(
        size: 40 << 20, partSize: 16 << 20, region: "us-east-1", uploadID: "up+1/x y%z",
        url: "http://127.0.0.1:9/bucket/a%20b.bin")

    private func log(parts: [(Int, String)]) -> [UInt8] {
        PartLogCodec.encodeHeader(upload)! + parts.flatMap { PartLogCodec.encodePart($0.0, etag: $0.1)! }
    }

    func testRoundTrip_keepsTheUploadAndEveryPart_withOddCharactersEscaped() {
        let bytes = log(parts: [(1, "\"e1\""), (3, "\"e 3\""), (2, "ü\u{1}")])
        let scan = PartLogCodec.decode(bytes)
        var expected = upload
        expected.parts = [1: "\"e1\"", 3: "\"e 3\"", 2: "ü\u{1}"]
        XCTAssertEqual(scan.state, expected)
        XCTAssertEqual(scan.validLength, bytes.count)
        XCTAssertFalse(bytes.dropLast().contains(0x0a) && String(decoding: bytes, as: UTF8.self).split(separator: "\n").count != 4)
    }

    /// An upload whose parts are gzip members (`--compress`) says so in its first record; a log
    /// without the field (every log before it) is one of plain parts; a coding this version does
    /// not know makes the log not resumable.
    func testCoding_isRecorded_absentMeansPlain_unknownIsNotTrusted() {
        var gzipped = upload
        gzipped.coding = .gzip
        let header = PartLogCodec.encodeHeader(gzipped)!
        XCTAssertTrue(String(decoding: header, as: UTF8.self).hasSuffix(" gzip\n"))
        XCTAssertEqual(PartLogCodec.decode(header + PartLogCodec.encodePart(1, etag: "\"e\"")!).state?.coding, .gzip)
        XCTAssertEqual(PartLogCodec.decode(PartLogCodec.encodeHeader(upload)!).state, upload)
        XCTAssertNil(PartLogCodec.decode(PartLogCodec.encodeHeader(upload)!).state?.coding)
        let unknown = IndexLogCodec.encode(payload: "upload \(40 << 20) \(16 << 20) us-east-1 id http://h/b/k zstd")
        XCTAssertNil(PartLogCodec.decode(unknown).state)
    }

    /// A crash can cut the last append anywhere: every prefix decodes to the parts whose records
    /// are whole, and `validLength` ends right after the last whole one.
    func testTornTail_atEveryByte_keepsTheWholeRecordsOnly() {
        let header = PartLogCodec.encodeHeader(upload)!
        let first = PartLogCodec.encodePart(1, etag: "\"a\"")!
        let second = PartLogCodec.encodePart(2, etag: "\"b\"")!
        let whole = header + first + second
        for cut in header.count..<whole.count {
            let scan = PartLogCodec.decode(Array(whole[..<cut]))
            let expectedParts = cut >= header.count + first.count ? [1: "\"a\""] : [:]
            XCTAssertEqual(scan.state?.parts, expectedParts, "cut at \(cut)")
            XCTAssertEqual(scan.validLength, cut >= header.count + first.count ? header.count + first.count : header.count, "cut at \(cut)")
        }
        for cut in 0..<header.count {
            XCTAssertNil(PartLogCodec.decode(Array(whole[..<cut])).state, "a torn first record is no upload (cut at \(cut))")
        }
    }

    func testGarbageOrAFlippedByte_endsTheLogThere() {
        let good = log(parts: [(1, "\"a\"")])
        let scan = PartLogCodec.decode(good + Array("R 9 00000000 part 2 x\n".utf8) + PartLogCodec.encodePart(3, etag: "c")!)
        XCTAssertEqual(scan.state?.parts, [1: "\"a\""])
        XCTAssertEqual(scan.validLength, good.count)
        var flipped = good
        flipped[flipped.count - 3] ^= 0x20
        XCTAssertEqual(PartLogCodec.decode(flipped).state?.parts, [:])
        XCTAssertEqual(PartLogCodec.decode(good + [0, 0, 0, 0]).validLength, good.count)
    }

    func testParts_outsideThePlan_orAnUnknownFirstRecord_areNotTrusted() {
        // 40 MiB in 16 MiB parts: three parts.
        XCTAssertEqual(PartLogCodec.decode(log(parts: [(1, "a"), (4, "d")])).state?.parts, [1: "a"])
        XCTAssertNil(PartLogCodec.decode(PartLogCodec.encodePart(1, etag: "a")!).state)
        XCTAssertNil(PartLogCodec.decode(IndexLogCodec.encode(payload: "upload 10 1024 r id url")).state, "parts below 5 MiB")
        XCTAssertNil(PartLogCodec.decode(Array("not a log\n".utf8)).state)
        XCTAssertNil(PartLogCodec.decode([]).state)
    }

    func testTooLongFields_areNotRecorded() {
        var huge = upload
        huge.url = String(repeating: "u", count: 5000)
        XCTAssertNil(PartLogCodec.encodeHeader(huge))
        XCTAssertNil(PartLogCodec.encodePart(1, etag: String(repeating: "e", count: 5000)))
    }
}
