import SpoolCore
import XCTest

final class MultipartCompletionCheckTests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    /// RFC 1321's test suite, and the 56-byte padding edge.
    func testMD5_RFC1321Vectors() {
        let vectors: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (message, expected) in vectors {
            XCTAssertEqual(hex(MD5.hash(Array(message.utf8))), expected, message)
        }
    }

    /// The ETag S3 (and rclone serve s3) gives a multipart object: MD5 of the parts' digests,
    /// `-<parts>` (parts "a"x10, "b"x7, "c", checked with Python's hashlib).
    func testMultipartETag_isTheMD5OfThePartDigests() {
        let parts = ["\"e09c80c42fda55f9d992e59ca6b3307d\"", "&quot;E1FAFFE9C3C801F2F8C3FBE7CB032CB2&quot;", "4a8a08f09d37b73795649038408b5f33"]
        XCTAssertEqual(MultipartCompletionCheck.multipartETag(of: parts), "8ee05f6ade6cd294ac522f259dd99dfc-3")
        XCTAssertNil(MultipartCompletionCheck.multipartETag(of: ["\"not-an-md5\"", parts[0]]), "an SSE-KMS-like ETag: only the shape is known")
        XCTAssertNil(MultipartCompletionCheck.multipartETag(of: []))
    }

    private let expected = MultipartCompletionCheck.Expected(
        size: 18, partETags: ["e09c80c42fda55f9d992e59ca6b3307d", "e1faffe9c3c801f2f8c3fbe7cb032cb2", "4a8a08f09d37b73795649038408b5f33"])

    /// The decision table of an ambiguous completion, row by row.
    func testAmbiguousCompletion_decisionTable() {
        XCTAssertEqual(MultipartCompletionCheck.afterAmbiguousCompletion(.gone), .headObject)
        guard case .retryLater = MultipartCompletionCheck.afterAmbiguousCompletion(.open) else { return XCTFail("an open upload was not completed") }
        guard case .retryLater = MultipartCompletionCheck.afterAmbiguousCompletion(.unclear("HTTP 503")) else { return XCTFail("unknown") }

        let ours = MultipartCompletionCheck.afterHead(.found(size: 18, etag: "\"8ee05f6ade6cd294ac522f259dd99dfc-3\""), expected: expected)
        guard case .completed = ours else { return XCTFail("the object it makes: \(ours)") }
        let sameShapeOtherObject = MultipartCompletionCheck.afterHead(
            .found(size: 18, etag: "\"00000000000000000000000000000000-3\""), expected: expected)
        guard case .startOver = sameShapeOtherObject else { return XCTFail("an older object of the same size and shape: \(sameShapeOtherObject)") }
        guard case .startOver = MultipartCompletionCheck.afterHead(.found(size: 17, etag: "\"8ee05f6ade6cd294ac522f259dd99dfc-3\""), expected: expected)
        else { return XCTFail("another size") }
        guard case .startOver = MultipartCompletionCheck.afterHead(.found(size: 18, etag: nil), expected: expected) else { return XCTFail("no ETag") }
        guard case .startOver = MultipartCompletionCheck.afterHead(.absent, expected: expected) else { return XCTFail("absent") }
        guard case .retryLater = MultipartCompletionCheck.afterHead(.unclear("HTTP 500"), expected: expected) else { return XCTFail("unknown") }
    }

    /// Parts whose ETags are not MD5s: only the shape and the size can be checked.
    func testHead_withoutMD5PartETags_checksSizeAndShape() {
        let shapeOnly = MultipartCompletionCheck.Expected(size: 18, partETags: ["k1", "k2", "k3"])
        XCTAssertNil(shapeOnly.etag)
        guard case .completed = MultipartCompletionCheck.afterHead(.found(size: 18, etag: "\"whatever-3\""), expected: shapeOnly)
        else { return XCTFail("shape and size match") }
        guard case .startOver = MultipartCompletionCheck.afterHead(.found(size: 18, etag: "\"whatever-4\""), expected: shapeOnly)
        else { return XCTFail("another part count") }
        guard case .startOver = MultipartCompletionCheck.afterHead(.found(size: 18, etag: "\"d41d8cd98f00b204e9800998ecf8427e\""), expected: shapeOnly)
        else { return XCTFail("a single PUT's ETag") }
    }

    /// A store whose ETags are the MD5 of the bytes (rclone serve s3): an object of the right
    /// size with such an ETag is worth reading the blob for; it is ours only if they match.
    func testHead_plainMD5ETag_isComparedWithTheBlobsMD5() {
        let head = MultipartCompletionCheck.Head.found(size: 18, etag: "\"0123456789abcdef0123456789abcdef\"")
        XCTAssertTrue(MultipartCompletionCheck.wantsContentMD5(head, expected: expected))
        XCTAssertFalse(MultipartCompletionCheck.wantsContentMD5(.found(size: 17, etag: "\"0123456789abcdef0123456789abcdef\""), expected: expected))
        XCTAssertFalse(MultipartCompletionCheck.wantsContentMD5(.found(size: 18, etag: "\"8ee05f6ade6cd294ac522f259dd99dfc-3\""), expected: expected))
        var withMD5 = expected
        withMD5.contentMD5 = "0123456789abcdef0123456789abcdef"
        guard case .completed = MultipartCompletionCheck.afterHead(head, expected: withMD5) else { return XCTFail("the blob's MD5") }
        withMD5.contentMD5 = "ffffffffffffffffffffffffffffffff"
        guard case .startOver = MultipartCompletionCheck.afterHead(head, expected: withMD5) else { return XCTFail("another object") }
        guard case .startOver = MultipartCompletionCheck.afterHead(head, expected: expected) else { return XCTFail("not compared: not ours") }
    }

    func testPartsToResend_areTheMissingAndTheChanged() {
        let sent = [1: "\"a\"", 2: "\"b\"", 3: "\"c\""]
        XCTAssertEqual(MultipartCompletionCheck.partsToResend(listed: [1: "a", 3: "x"], sent: sent, partCount: 3), [2, 3])
        XCTAssertEqual(MultipartCompletionCheck.partsToResend(listed: [1: "&quot;a&quot;", 2: "b", 3: "c"], sent: sent, partCount: 3), [])
    }
}

final class AbortLogCodecTests: XCTestCase {
    private let t = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    private func owed(_ upload: String) -> OwedAbort {
        OwedAbort(id: ItemID("20261126T074110449Z-0000-fe1d58b7-big.bin")!, region: "us-east-1", uploadID: upload,
                  url: "http://127.0.0.1:9000/bucket/a b.bin", since: t)
    }

    func testOwedAbortsAreThoseNotConfirmed_inOrder() {
        let bytes = AbortLogCodec.encodeOwed(owed("u1"))! + AbortLogCodec.encodeOwed(owed("u 2"))!
            + AbortLogCodec.encodeConfirmed(uploadID: "u1")! + AbortLogCodec.encodeOwed(owed("u3"))!
        let scan = AbortLogCodec.decode(bytes)
        XCTAssertEqual(scan.owed, [owed("u 2"), owed("u3")])
        XCTAssertEqual(scan.confirmed, 1)
        XCTAssertEqual(scan.damagedLines, 0)
        XCTAssertEqual(scan.validLength, bytes.count)
    }

    /// A torn tail is not a record; a record appended after it on a new line counts; a damaged
    /// line in the middle is stepped over and counted.
    func testTornTailAndDamagedLines() {
        var bytes = AbortLogCodec.encodeOwed(owed("u1"))!
        let torn = Array(AbortLogCodec.encodeOwed(owed("u2"))!.prefix(20))
        XCTAssertEqual(AbortLogCodec.decode(bytes + torn).validLength, bytes.count)
        XCTAssertFalse(AbortLogCodec.decode(bytes + torn).endsInNewline)
        bytes += torn + [UInt8(ascii: "\n")] + AbortLogCodec.encodeOwed(owed("u3"))!
        var flipped = AbortLogCodec.encodeOwed(owed("u4"))!
        flipped[flipped.count - 3] ^= 1
        bytes += flipped + AbortLogCodec.encodeConfirmed(uploadID: "u1")!
        let scan = AbortLogCodec.decode(bytes)
        XCTAssertEqual(scan.owed.map(\.uploadID), ["u3"])
        XCTAssertEqual(scan.damagedLines, 2, "the torn line, and the flipped one")
    }
}
