import ArgumentKit
import XCTest

final class ByteUnitsTests: XCTestCase {
    private let spec = CommandSpec(
        name: "run", abstract: "Upload.", options: [OptionSpec("limit-rate", valueName: "BYTES", help: "Bytes per second.")])

    private func rate(_ text: String, range: ClosedRange<Int64> = 1...Int64.max, limits: String? = nil) throws -> Int64? {
        try parse(["--limit-rate", text], spec).bytes("limit-rate", range: range, limits: limits)
    }

    private func failure(_ text: String, range: ClosedRange<Int64> = 1...Int64.max, limits: String? = nil) -> String? {
        do {
            _ = try rate(text, range: range, limits: limits)
            return nil
        } catch {
            XCTAssertEqual((error as? ArgumentError)?.command, "run")
            return (error as? ArgumentError)?.message
        }
    }

    func testParse_lettersAndIECUnitsArePowersOf1024_inEitherCase() {
        let cases: [(String, Int64)] = [
            ("0", 0), ("1500", 1500), ("1500B", 1500), ("1500b", 1500),
            ("64K", 64 << 10), ("64k", 64 << 10), ("64KiB", 64 << 10), ("64kib", 64 << 10),
            ("5M", 5 << 20), ("5m", 5 << 20), ("5MiB", 5 << 20), ("5MIB", 5 << 20),
            ("2G", 2 << 30), ("2g", 2 << 30), ("2GiB", 2 << 30),
            ("3T", 3 << 40), ("3TiB", 3 << 40),
        ]
        for (text, bytes) in cases { XCTAssertEqual(try ByteUnits.parse(text).get(), bytes, text) }
    }

    func testParse_refusesDecimalLookingUnitsAsAmbiguous_sayingWhatToWrite() {
        XCTAssertEqual(ByteUnits.parse("5MB"), .failure(.ambiguous(suggestion: "5M")))
        XCTAssertEqual(ByteUnits.parse("10kb"), .failure(.ambiguous(suggestion: "10K")))
        XCTAssertEqual(ByteUnits.parse("2GB"), .failure(.ambiguous(suggestion: "2G")))
        XCTAssertEqual(ByteUnits.parse("1TB"), .failure(.ambiguous(suggestion: "1T")))
    }

    func testParse_refusesAnythingElse() {
        for bad in ["", "K", "MiB", "B", "1.5M", "-1", "+1", " 1", "1 ", "1 M", "1Mi", "1iB", "1X", "1KK", "MB", "١٢", "1e6"] {
            XCTAssertEqual(ByteUnits.parse(bad), .failure(.notASize), bad)
        }
        XCTAssertEqual(ByteUnits.parse("99999999999999999999"), .failure(.tooLarge))
        XCTAssertEqual(ByteUnits.parse("99999999999G"), .failure(.tooLarge))
    }

    func testExactText_saysTheValueBackWithoutRounding() {
        XCTAssertEqual(ByteUnits.exactText(0), "0 B")
        XCTAssertEqual(ByteUnits.exactText(250), "250 B")
        XCTAssertEqual(ByteUnits.exactText(1024), "1 KiB")
        XCTAssertEqual(ByteUnits.exactText(5 << 20), "5 MiB")
        XCTAssertEqual(ByteUnits.exactText((5 << 20) + 1), "5242881 B")
        XCTAssertEqual(ByteUnits.exactText(1536 << 20), "1536 MiB")
        XCTAssertEqual(ByteUnits.exactText(5 << 30), "5 GiB")
    }

    func testBytes_notGivenIsNil_valuesInRangeAreRead() throws {
        XCTAssertNil(try parse([], spec).bytes("limit-rate"))
        XCTAssertEqual(try rate("2K"), 2048)
        XCTAssertEqual(try rate("2KiB"), 2048)
        // The minimum itself is in range, however it is written.
        for minimum in ["5M", "5MiB", "5m", "5242880"] {
            XCTAssertEqual(try rate(minimum, range: (5 << 20)...(5 << 30)), 5 << 20, minimum)
        }
        XCTAssertEqual(try rate("5G", range: (5 << 20)...(5 << 30)), 5 << 30)
    }

    func testBytes_refusalsSayWhatIsWrong() {
        XCTAssertEqual(
            failure("4M", range: (5 << 20)...(5 << 30), limits: "S3's part limits"),
            "--limit-rate '4M' (4 MiB) must be between 5 MiB and 5 GiB (S3's part limits)")
        XCTAssertEqual(failure("6GiB", range: (5 << 20)...(5 << 30)), "--limit-rate '6GiB' (6 GiB) must be between 5 MiB and 5 GiB")
        XCTAssertEqual(failure("0"), "--limit-rate '0' (0 B) must be at least 1 B")
        XCTAssertEqual(
            failure("1MB"),
            "--limit-rate '1MB' is ambiguous (powers of 1000 or of 1024?): write 1M or 1MiB for powers of 1024, or the number of bytes")
        XCTAssertEqual(
            failure("2X"),
            "--limit-rate '2X' is not a size: a whole number of bytes, or one followed by K, M, G, T: powers of 1024, also written KiB, MiB, GiB, TiB (e.g. 500M, 2GiB)")
        XCTAssertEqual(failure("99999999999G"), "--limit-rate '99999999999G' is too large")
    }
}
