import SpoolCore
import XCTest

final class TimestampTests: XCTestCase {
    private let known: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (-86_400_000, "1969-12-31T00:00:00.000Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),  // leap year divisible by 400
        (4_107_456_000_000, "2100-02-28T00:00:00.000Z"),
        (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),  // 2100 is not a leap year
        (-2_203_891_200_000, "1900-03-01T00:00:00.000Z"),  // nor is 1900
        (-11_670_998_400_000, "1600-02-29T00:00:00.000Z"),
        (1_735_603_200_000, "2024-12-31T00:00:00.000Z"),
        (2_147_483_648_000, "2038-01-19T03:14:08.000Z"),  // past 32-bit time_t
        (253_402_214_400_000, "9999-12-31T00:00:00.000Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
        (1_795_356_603_123, "2026-11-22T14:10:03.123Z"),
    ]

    func testKnownDates_formatAndParseBothWays() {
        for (ms, text) in known {
            let t = Timestamp(millisecondsSinceEpoch: ms)
            XCTAssertEqual(t.iso8601, text, "\(ms)")
            XCTAssertEqual(Timestamp(iso8601: text), t, text)
            XCTAssertEqual(CivilTime(t).timestamp, t, text)
        }
    }

    func testCivilTime_fields() {
        let c = CivilTime(Timestamp(millisecondsSinceEpoch: -1))
        XCTAssertEqual(c, CivilTime(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59, millisecond: 999))
        XCTAssertEqual(
            CivilTime(year: 2038, month: 1, day: 19, hour: 3, minute: 14, second: 8, millisecond: 0).timestamp.millisecondsSinceEpoch,
            2_147_483_648_000)
    }

    func testEveryDayFor800Years_roundTrips_andIsContiguous() {
        var previous: CivilTime?
        var ms: Int64 = -5_000 * 86_400_000
        let end: Int64 = 300_000 * 86_400_000
        while ms < end {
            let c = CivilTime(Timestamp(millisecondsSinceEpoch: ms + 43_200_123))
            XCTAssertEqual(c.timestamp.millisecondsSinceEpoch, ms + 43_200_123)
            if let p = previous {
                let nextDay = p.day + 1 <= daysIn(p.year, p.month)
                XCTAssertEqual(c.day, nextDay ? p.day + 1 : 1)
                if !nextDay { XCTAssertEqual(c.month, p.month == 12 ? 1 : p.month + 1) }
            }
            previous = c
            ms += 86_400_000
        }
    }

    private func daysIn(_ y: Int, _ m: Int) -> Int {
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
    }

    func testCompactForm() {
        XCTAssertEqual(Timestamp(millisecondsSinceEpoch: 1_795_356_603_123).compact, "20261122T141003123Z")
        XCTAssertEqual(Timestamp(millisecondsSinceEpoch: 0).compact, "19700101T000000000Z")
    }

    func testParse_fractionsOptionalAndPadded() {
        XCTAssertEqual(Timestamp(iso8601: "1970-01-01T00:00:01Z")?.millisecondsSinceEpoch, 1000)
        XCTAssertEqual(Timestamp(iso8601: "1970-01-01T00:00:01.5Z")?.millisecondsSinceEpoch, 1500)
        XCTAssertEqual(Timestamp(iso8601: "1970-01-01T00:00:01.123456Z")?.millisecondsSinceEpoch, 1123)
    }

    func testParse_rejectsMalformedText() {
        for bad in ["", "1970-01-01T00:00:00", "1970-01-01T00:00:00.Z", "1970-01-01 00:00:00Z", "1970-13-01T00:00:00Z",
                    "1970-01-01T24:00:00Z", "1970-01-01T00:60:00Z", "1970-01-01T00:00:00.000+01:00", "x970-01-01T00:00:00Z",
                    "1970-01-01T00:00:00.5"] {
            XCTAssertNil(Timestamp(iso8601: bad), bad)
        }
    }

    func testArithmetic() {
        let t = Timestamp(millisecondsSinceEpoch: 1_000)
        XCTAssertEqual(t.adding(seconds: 1.5).millisecondsSinceEpoch, 2_500)
        XCTAssertEqual(t.adding(seconds: -2).millisecondsSinceEpoch, -1_000)
        XCTAssertEqual(t.seconds(until: Timestamp(millisecondsSinceEpoch: 500)), -0.5)
        XCTAssertEqual(Timestamp(secondsSinceEpoch: 1.0005).millisecondsSinceEpoch, 1001)
        XCTAssertLessThan(Timestamp(millisecondsSinceEpoch: -5), Timestamp(millisecondsSinceEpoch: 3))
    }

    /// Both forms equal the padded fields they were made from before (the reference below), for
    /// years before 0, after 9999 and every millisecond pattern in between.
    func testFormats_matchThePaddedFields() {
        func pad(_ value: Int, _ width: Int) -> String {
            let s = String(value)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        var state: UInt64 = 0x1234_5678
        var samples: [Int64] = [0, -1, 1, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_000, -62_167_219_200_001,
                                Int64.max / 2, Int64.min / 2]
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            samples.append(Int64(bitPattern: state) % 400_000_000_000_000)
        }
        for ms in samples {
            let c = CivilTime(Timestamp(millisecondsSinceEpoch: ms))
            let iso = "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):"
                + "\(pad(c.second, 2)).\(pad(c.millisecond, 3))Z"
            let compact = "\(pad(c.year, 4))\(pad(c.month, 2))\(pad(c.day, 2))T\(pad(c.hour, 2))\(pad(c.minute, 2))"
                + "\(pad(c.second, 2))\(pad(c.millisecond, 3))Z"
            XCTAssertEqual(Timestamp(millisecondsSinceEpoch: ms).iso8601, iso, "\(ms)")
            XCTAssertEqual(Timestamp(millisecondsSinceEpoch: ms).compact, compact, "\(ms)")
        }
    }
}
