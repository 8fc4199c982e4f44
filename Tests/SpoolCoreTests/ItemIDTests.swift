import SpoolCore
import XCTest

final class ItemIDTests: XCTestCase {
    func testGeneratedIDs_sortInCreationOrder_evenWithinOneMillisecond() {
        var gen = ItemIDGenerator(processTag: 0xabc)
        let t = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)
        let ids = (0..<50).map { gen.next(at: t, originalName: "f\($0)") }
        XCTAssertEqual(ids, ids.sorted())
        XCTAssertEqual(Set(ids).count, 50)
    }

    func testGeneratedIDs_neverGoBackwardsWhenClockDoes() {
        var gen = ItemIDGenerator(processTag: 1)
        let a = gen.next(at: Timestamp(millisecondsSinceEpoch: 2_000), originalName: nil)
        let b = gen.next(at: Timestamp(millisecondsSinceEpoch: 1_000), originalName: nil)
        XCTAssertLessThan(a, b)
    }

    func testHint_isSanitisedAndCapped() {
        XCTAssertEqual(ItemID.sanitizedHint("my photo;1%.jpg"), "my_photo_1_.jpg")
        XCTAssertEqual(ItemID.sanitizedHint("../../etc/passwd"), "etc_passwd")
        XCTAssertEqual(ItemID.sanitizedHint("héllo wörld"), "h_llo_w_rld")
        XCTAssertEqual(ItemID.sanitizedHint("...."), "")
        XCTAssertLessThanOrEqual(ItemID.sanitizedHint(String(repeating: "x", count: 500)).count, ItemID.maximumHintLength)
    }

    func testID_rejectsNamesThatAreNotOurs() {
        XCTAssertNil(ItemID("photo.jpg"))
        XCTAssertNil(ItemID("20261121T141003123Z-0000-../x"))
        XCTAssertNil(ItemID("20261121T141003123Z-0000-a b"))
        XCTAssertNotNil(ItemID("20261121T141003123Z-0000-9f3ab2c1-photo.jpg"))
    }

    func testFileName_roundTripsAndRejectsStrangers() {
        let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-my.photo.a1.jpg")!
        let name = ItemFileName(id: id, attempt: 12, kind: .blob)
        XCTAssertEqual(name.description, "20261121T141003123Z-0000-9f3ab2c1-my.photo.a1.jpg.a12.blob")
        XCTAssertEqual(ItemFileName(parsing: name.description), name)
        XCTAssertNil(ItemFileName(parsing: "\(id).a01.json"))
        XCTAssertNil(ItemFileName(parsing: "\(id).a1.txt"))
        XCTAssertNil(ItemFileName(parsing: "\(id).json"))
        XCTAssertNil(ItemFileName(parsing: "\(id).a.json"))
    }

    func testTimestamp_iso8601RoundTrip() {
        let t = Timestamp(millisecondsSinceEpoch: 1_795_234_567_891)
        XCTAssertEqual(Timestamp(iso8601: t.iso8601), t)
        XCTAssertEqual(Timestamp(millisecondsSinceEpoch: 0).iso8601, "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamp(iso8601: "2000-02-29T23:59:59Z")?.millisecondsSinceEpoch, 951_868_799_000)
        XCTAssertEqual(Timestamp(iso8601: "2026-11-21T14:10:03.5Z")?.compact, "20261121T141003500Z")
        XCTAssertNil(Timestamp(iso8601: "2026-11-21 14:10:03Z"))
        XCTAssertNil(Timestamp(iso8601: "2026-11-21T14:10:03.1234567Zjunk"))
    }
}
