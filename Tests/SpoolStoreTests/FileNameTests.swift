import SpoolSystem
import XCTest

/// Names are bytes: `FileName` carries any of them in a String and back without loss.
final class FileNameTests: XCTestCase {
    func testValidUTF8_isItsOwnString() {
        for name in ["fox.jpg", "naïve résumé.txt", "日本.bin", ""] {
            XCTAssertEqual(FileName.decode(Array(name.utf8)), name)
            XCTAssertEqual(FileName.encode(name), Array(name.utf8))
            XCTAssertFalse(FileName.isEscaped(name))
            XCTAssertEqual(FileName.display(name), name)
        }
    }

    func testInvalidBytes_roundTrip_andDisplayAsHex() {
        let cases: [[UInt8]] = [
            [0x63, 0x61, 0x66, 0xE9, 0x2E, 0x74, 0x78, 0x74],  // "café.txt" in Latin-1
            [0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80], [0x80, 0x41],
        ]
        for bytes in cases {
            let name = FileName.decode(bytes)
            XCTAssertTrue(FileName.isEscaped(name), "\(bytes)")
            XCTAssertEqual(FileName.encode(name), bytes)
        }
        XCTAssertEqual(FileName.display(FileName.decode(cases[0])), "caf\\xE9.txt")
    }

    func testANameHoldingTheEscapeScalarsItself_stillRoundTrips() {
        let name = "a\u{10FF41}b"  // valid UTF-8 that looks like an escaped "A"
        let bytes = Array(name.utf8)
        XCTAssertEqual(FileName.encode(FileName.decode(bytes)), bytes)
        XCTAssertNotEqual(FileName.decode(bytes), "aAb")
    }
}
