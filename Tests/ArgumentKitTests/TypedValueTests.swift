import ArgumentKit
import XCTest

final class TypedValueTests: XCTestCase {
    private func retries(_ text: String, range: ClosedRange<Int>? = nil) throws -> Int? {
        try parse(["--retries", text, "f"]).int("retries", range: range)
    }

    private func timeout(_ text: String, range: ClosedRange<Double>? = nil) throws -> Double? {
        try parse(["--timeout", text, "f"]).seconds("timeout", range: range)
    }

    private func message(_ body: () throws -> Any?) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as ArgumentError {
            XCTAssertEqual(error.command, "enqueue")
            return error.message
        } catch {
            return "unexpected \(error)"
        }
    }

    // MARK: int

    func testInt_notGivenIsNil() throws {
        XCTAssertNil(try parse(["f"]).int("retries", range: 1...3))
    }

    func testInt_acceptsSignedWholeNumbers() throws {
        XCTAssertEqual(try retries("42"), 42)
        XCTAssertEqual(try retries("-7"), -7)
        XCTAssertEqual(try retries("+7"), 7)
        XCTAssertEqual(try retries("0"), 0)
        XCTAssertEqual(try retries("007"), 7)
        XCTAssertEqual(try retries("9223372036854775807"), Int.max)
        XCTAssertEqual(try retries("-9223372036854775808"), Int.min)
    }

    func testInt_rejectsGarbage() {
        for garbage in ["", "abc", "1.5", "1e3", " 5", "5 ", "0x10", "5_000", "1,000", "+", "-", "--5", "١٢", "５"] {
            XCTAssertEqual(
                message { try self.retries(garbage) }, "option '--retries' needs a whole number, got '\(garbage)'",
                "'\(garbage)'")
        }
    }

    func testInt_overflowSaysOutOfRange() {
        XCTAssertEqual(
            message { try self.retries("9223372036854775808") },
            "value '9223372036854775808' for '--retries' is out of range")
        XCTAssertEqual(
            message { try self.retries("-99999999999999999999") },
            "value '-99999999999999999999' for '--retries' is out of range")
    }

    func testInt_rangeIsInclusiveAndNamedInTheError() throws {
        XCTAssertEqual(try retries("1", range: 1...10), 1)
        XCTAssertEqual(try retries("10", range: 1...10), 10)
        XCTAssertEqual(message { try self.retries("0", range: 1...10) }, "option '--retries' must be between 1 and 10, got 0")
        XCTAssertEqual(message { try self.retries("-1", range: 0...5) }, "option '--retries' must be between 0 and 5, got -1")
    }

    // MARK: seconds

    func testSeconds_notGivenIsNil() throws {
        XCTAssertNil(try parse(["f"]).seconds("timeout"))
    }

    func testSeconds_plainNumbersAreSeconds() throws {
        XCTAssertEqual(try timeout("2"), 2)
        XCTAssertEqual(try timeout("0.5"), 0.5)
        XCTAssertEqual(try timeout(".5"), 0.5)
        XCTAssertEqual(try timeout("5."), 5)
        XCTAssertEqual(try timeout("0"), 0)
    }

    func testSeconds_unitsScale() throws {
        XCTAssertEqual(try timeout("1.5s"), 1.5)
        XCTAssertEqual(try timeout("250ms"), 0.25)
        XCTAssertEqual(try timeout("2m"), 120)
        XCTAssertEqual(try timeout("1h"), 3600)
        XCTAssertEqual(try timeout("0.5h"), 1800)
    }

    func testSeconds_rejectsGarbage() {
        let garbage = [
            "", "abc", "s", "ms", ".", ".s", "1.2.3", "1e3", "inf", "nan", "0x10", " 2", "2 ", "2 s", "2S", "2sec",
            "2d", "1h30m", "+2", "٢", "2µs",
        ]
        for text in garbage {
            XCTAssertEqual(
                message { try self.timeout(text) },
                "option '--timeout' needs a duration such as 30, 1.5s, 250ms, 2m or 1h; got '\(text)'", "'\(text)'")
        }
    }

    func testSeconds_negativeIsRefusedWithItsOwnReason() {
        XCTAssertEqual(message { try self.timeout("-1") }, "option '--timeout' needs a duration that is not negative, got '-1'")
        XCTAssertEqual(message { try self.timeout("-250ms") }, "option '--timeout' needs a duration that is not negative, got '-250ms'")
        XCTAssertEqual(
            message { try self.timeout("-x") },
            "option '--timeout' needs a duration such as 30, 1.5s, 250ms, 2m or 1h; got '-x'")
    }

    func testSeconds_overflowToInfinityIsOutOfRange() {
        let huge = "1" + String(repeating: "0", count: 400)
        XCTAssertEqual(message { try self.timeout(huge) }, "value '\(huge)' for '--timeout' is out of range")
    }

    func testSeconds_rangeIsCheckedAfterUnitsAndPrintedPlainly() throws {
        XCTAssertEqual(try timeout("1m", range: 1...60), 60)
        XCTAssertEqual(
            message { try self.timeout("2m", range: 0.5...60) }, "option '--timeout' must be between 0.5 and 60 seconds, got 120")
        XCTAssertEqual(
            message { try self.timeout("100ms", range: 0.25...1) },
            "option '--timeout' must be between 0.25 and 1 seconds, got 0.1")
    }
}
