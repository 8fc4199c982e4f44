import SpoolCore
import XCTest

final class ByteTextTests: XCTestCase {
    func testFormat_bytesBelowOneKiB_thenBinaryUnitsWithOneRoundedDecimal() {
        XCTAssertEqual(ByteText.format(0), "0 B")
        XCTAssertEqual(ByteText.format(1023), "1023 B")
        XCTAssertEqual(ByteText.format(1024), "1.0 KiB")
        XCTAssertEqual(ByteText.format(1587), "1.5 KiB")  // 1.549...
        XCTAssertEqual(ByteText.format(1638), "1.6 KiB")  // 1.599... rounds up
        XCTAssertEqual(ByteText.format(3 * 1024 * 1024), "3.0 MiB")
        XCTAssertEqual(ByteText.format(5 << 40), "5.0 TiB")
        XCTAssertEqual(ByteText.format(2048 << 40), "2048.0 TiB")
    }
}
