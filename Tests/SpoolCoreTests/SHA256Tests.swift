import SpoolCore
import XCTest

final class SHA256Tests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    private func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = hex.makeIterator()
        while let a = chars.next(), let b = chars.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
        return out
    }

    /// FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf").
    func testNISTVectors() {
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
        ]
        for (message, expected) in vectors {
            XCTAssertEqual(hex(SHA256.hash(Array(message.utf8))), expected, message)
        }
    }

    func testOneMillionA_inUnevenPieces_equalsOneShot() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        XCTAssertEqual(hex(SHA256.hash(million)), expected)
        var hasher = SHA256()
        var offset = 0
        var piece = 1
        while offset < million.count {
            let end = min(million.count, offset + piece)
            million[offset..<end].withUnsafeBytes { hasher.update($0) }
            offset = end
            piece = piece * 7 % 1000 + 1  // 1, 8, 57, 400, ...: splits land inside and across blocks
        }
        XCTAssertEqual(hex(hasher.finalize()), expected)
    }

    /// Every length around the padding boundaries (55, 56, 63, 64 bytes...), byte by byte vs. one shot.
    func testPaddingBoundaries_streamedByteByByteMatchesOneShot() {
        let known: [Int: String] = [
            55: "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318",
            56: "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a",
            64: "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb",
        ]
        for length in 0...130 {
            let message = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            var hasher = SHA256()
            for byte in message { hasher.update([byte]) }
            let streamed = hasher.finalize()
            XCTAssertEqual(streamed, SHA256.hash(message), "length \(length)")
            if let expected = known[length] { XCTAssertEqual(hex(streamed), expected, "length \(length)") }
        }
    }

    /// RFC 4231 test cases 1-7 (case 5 compares the first 128 bits, as the RFC does).
    func testHMAC_RFC4231() {
        let cases: [([UInt8], [UInt8], String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (Array(1...25), [UInt8](repeating: 0xcd, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            ([UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8),
             "a3b6167473100ee06e0c796c2955552b"),
            ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            ([UInt8](repeating: 0xaa, count: 131),
             Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for (number, (key, message, expected)) in cases.enumerated() {
            let mac = hex(HMACSHA256.authenticationCode(for: message, key: key))
            XCTAssertEqual(String(mac.prefix(expected.count)), expected, "RFC 4231 case \(number + 1)")
        }
        var streamed = HMACSHA256(key: Array("Jefe".utf8))
        for word in ["what do ya ", "want for ", "nothing?"] { streamed.update(Array(word.utf8)) }
        XCTAssertEqual(hex(streamed.finalize()), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testBase64_andContentDigestHeader() {
        XCTAssertEqual(Base64.encode([UInt8]()), "")
        XCTAssertEqual(Base64.encode(Array("f".utf8)), "Zg==")
        XCTAssertEqual(Base64.encode(Array("fo".utf8)), "Zm8=")
        XCTAssertEqual(Base64.encode(Array("foo".utf8)), "Zm9v")
        XCTAssertEqual(Base64.encode(Array("foobar".utf8)), "Zm9vYmFy")
        XCTAssertEqual(
            ContentDigest.sha256.headerValue(digest: SHA256.hash(Array("hello".utf8))),
            "sha-256=:LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=:")
    }
}
