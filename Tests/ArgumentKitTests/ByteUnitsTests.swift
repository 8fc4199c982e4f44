import ArgumentKit
import XCTest

final class ByteUnitsTests: XCTestCase {
    private let spec = CommandSpec(
        name: "run", abstract: "Upload.", options: [OptionSpec("limit-rate", valueName: "BYTES", help: "Bytes per second.")])

    private func rate(_ text: String, range: ClosedRange<Int64> = 1...Int64.max) throws -> Int64? {
        try parse(["--limit-rate", text], spec).bytes("limit-rate", units: .binaryLetters, range: range, invalid: "is not a rate")
    }

    func testDecimalOrBinary_acceptsSIAndIECSuffixes_rejectsTheRest() {
        let units = ByteUnits.decimalOrBinary
        XCTAssertEqual(units.parse("0"), 0)
        XCTAssertEqual(units.parse("1500"), 1500)
        XCTAssertEqual(units.parse("1500B"), 1500)
        XCTAssertEqual(units.parse("10K"), 10_000)
        XCTAssertEqual(units.parse("3M"), 3_000_000)
        XCTAssertEqual(units.parse("2G"), 2_000_000_000)
        XCTAssertEqual(units.parse("64KiB"), 65_536)
        XCTAssertEqual(units.parse("5MiB"), 5 << 20)
        XCTAssertEqual(units.parse("2GiB"), 2 << 30)
        for bad in ["", "K", "1.5M", "-1", "+1", " 1", "1 M", "1k", "1MB", "1Mi", "99999999999999999999", "99999999999G", "١٢"] {
            XCTAssertNil(units.parse(bad), bad)
        }
    }

    func testBinaryLetters_areCurlsPowersOf1024_inEitherCase() {
        let units = ByteUnits.binaryLetters
        XCTAssertEqual(units.parse("1000"), 1000)
        XCTAssertEqual(units.parse("500K"), 500 << 10)
        XCTAssertEqual(units.parse("2m"), 2 << 20)
        XCTAssertEqual(units.parse("5G"), 5 << 30)
        for bad in ["", "M", "1.5M", "-1", "+1", "1 M", "1MiB", "1B", "1T", "9999999999999G"] {
            XCTAssertNil(units.parse(bad), bad)
        }
    }

    func testBytes_notGivenIsNil_outsideTheRangeIsRefusedInTheOptionsWords() throws {
        XCTAssertNil(try parse([], spec).bytes("limit-rate", units: .binaryLetters, invalid: "is not a rate"))
        XCTAssertEqual(try rate("2K"), 2048)
        XCTAssertEqual(try rate("5M", range: (5 << 20)...(5 << 30)), 5 << 20)
        for (text, range) in [("0", 1...Int64.max), ("4M", (5 << 20)...(5 << 30)), ("6G", (5 << 20)...(5 << 30)), ("2X", 1...Int64.max)] {
            XCTAssertThrowsError(try rate(text, range: range)) { error in
                XCTAssertEqual((error as? ArgumentError)?.message, "--limit-rate '\(text)' is not a rate")
                XCTAssertEqual((error as? ArgumentError)?.command, "run")
            }
        }
    }
}
