import SpoolCore
import XCTest

final class URLTemplateTests: XCTestCase {
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-photo.jpg")!
    /// The item's creation time (its json's createdAt): 2026-03-07T04:05:06.789Z.
    let created = CivilTime(year: 2026, month: 3, day: 7, hour: 4, minute: 5, second: 6, millisecond: 789).timestamp

    func testTrailingSlash_appendsTheEncodedOriginalName() {
        XCTAssertEqual(URLTemplate("https://h/up/").url(id: id, originalName: "photo.jpg", createdAt: created), "https://h/up/photo.jpg")
        XCTAssertEqual(URLTemplate("https://h/up/").url(id: id, originalName: "my photo.jpg", createdAt: created), "https://h/up/my%20photo.jpg")
    }

    func testPathBelowIncoming_eachSegmentEncoded_slashesKept() {
        XCTAssertEqual(URLTemplate("https://h/up/").url(id: id, originalName: "2026-11-23/cam 7/fox.jpg", createdAt: created),
                       "https://h/up/2026-11-23/cam%207/fox.jpg")
        XCTAssertEqual(URLTemplate("https://h/{name}?v=1").url(id: id, originalName: "a/b;c", createdAt: created), "https://h/a/b%3Bc?v=1")
    }

    func testDotSegments_areEncodedSoTheyCannotClimb() {
        XCTAssertEqual(URLTemplate.encodePath("../x/./y/.."), "%2E%2E/x/%2E/y/%2E%2E")
        XCTAssertEqual(URLTemplate.encodePath("a..b/.c"), "a..b/.c")
    }

    func testNoSlashNoPlaceholders_usesTheURLAsIs() {
        XCTAssertEqual(URLTemplate("https://h/up").url(id: id, originalName: "a b", createdAt: created), "https://h/up")
    }

    func testEncoding_spacesUnicodePercentSemicolonSlash() {
        XCTAssertEqual(URLTemplate.encodePathSegment("a b"), "a%20b")
        XCTAssertEqual(URLTemplate.encodePathSegment("é"), "%C3%A9")
        XCTAssertEqual(URLTemplate.encodePathSegment("日本"), "%E6%97%A5%E6%9C%AC")
        XCTAssertEqual(URLTemplate.encodePathSegment("100%"), "100%25")
        XCTAssertEqual(URLTemplate.encodePathSegment("a;b"), "a%3Bb")
        XCTAssertEqual(URLTemplate.encodePathSegment("../x/y?z#w"), "..%2Fx%2Fy%3Fz%23w")
        XCTAssertEqual(URLTemplate.encodePathSegment("A-z_0.9~"), "A-z_0.9~")
        XCTAssertEqual(URLTemplate.encodePathSegment(""), "")
    }

    func testPlaceholders_areSubstituted() {
        XCTAssertEqual(
            URLTemplate("https://h/{id}/{name}?v=1").url(id: id, originalName: "a b;c", createdAt: created),
            "https://h/20261121T141003123Z-0000-9f3ab2c1-photo.jpg/a%20b%3Bc?v=1")
        XCTAssertEqual(URLTemplate("https://h/{name}/{name}").url(id: id, originalName: "x", createdAt: created), "https://h/x/x")
    }

    func testPlaceholders_withTrailingSlash_doNotAlsoAppend() {
        XCTAssertEqual(URLTemplate("https://h/{id}/").url(id: id, originalName: "x", createdAt: created), "https://h/\(id.rawValue)/")
    }

    func testNameThatLooksLikeAPlaceholder_isNotExpandedAgain() {
        XCTAssertEqual(URLTemplate("https://h/{name}").url(id: id, originalName: "{id}", createdAt: created), "https://h/%7Bid%7D")
    }

    func testDateParts_areTheCreationTimeInUTC_zeroPadded() {
        XCTAssertEqual(URLTemplate("https://h/{date}/").url(id: id, originalName: "a.jpg", createdAt: created),
                       "https://h/2026-03-07/a.jpg")
        XCTAssertEqual(URLTemplate("https://h/y={year}/m={month}/d={day}/h={hour}/x").url(id: id, originalName: "a", createdAt: created),
                       "https://h/y=2026/m=03/d=07/h=04/x")
        let lastMillisecond = CivilTime(year: 2026, month: 12, day: 31, hour: 23, minute: 59, second: 59, millisecond: 999).timestamp
        XCTAssertEqual(URLTemplate("https://h/{date}T{hour}").url(id: id, originalName: "a", createdAt: lastMillisecond),
                       "https://h/2026-12-31T23")
        XCTAssertEqual(URLTemplate("https://h/{date}T{hour}").url(id: id, originalName: "a", createdAt: lastMillisecond.adding(milliseconds: 1)),
                       "https://h/2027-01-01T00")
    }

    func testDateParts_withTrailingSlash_stillAppendTheName() {
        XCTAssertEqual(URLTemplate("https://h/{year}/{month}/").url(id: id, originalName: "cam 7/f.jpg", createdAt: created),
                       "https://h/2026/03/cam%207/f.jpg")
        XCTAssertEqual(URLTemplate("https://h/{date}/{name}").url(id: id, originalName: "f", createdAt: created), "https://h/2026-03-07/f")
    }

    func testDateParts_comeFromTheGivenTime_notTheID() {
        // The id says 2026-11-21 14:10; the URL follows the creation time it is given.
        XCTAssertEqual(URLTemplate("https://h/{date}/{hour}").url(id: id, originalName: "a", createdAt: created), "https://h/2026-03-07/04")
    }

    func testCreationTime_isTheJsonsCreatedAt_elseTheTimeInTheID() {
        var metadata = ItemMetadata(id: id, originalName: "a", size: 1, contentType: "text/plain", createdAt: created)
        XCTAssertEqual(metadata.creationTime, created)
        metadata.createdAt = "yesterday"  // an edited json
        XCTAssertEqual(metadata.creationTime, id.createdAt)
        XCTAssertEqual(CivilTime(metadata.creationTime).day, 21)
    }

    func testValidate_unknownPlaceholder_isRefused_listingTheKnownOnes() {
        XCTAssertThrowsError(try URLTemplate.validate("https://h/{nmae}/")) { error in
            XCTAssertEqual((error as? URLTemplate.UnknownPlaceholder)?.placeholder, "nmae")
            XCTAssertEqual("\(error)", "unknown placeholder {nmae} (known: {name} {id} {host} {date} {year} {month} {day} {hour})")
        }
        XCTAssertThrowsError(try URLTemplate.validate("https://h/{Date}"))
        XCTAssertNoThrow(try URLTemplate.validate("https://h/{name}/{id}/{host}/{date}/{year}{month}{day}{hour}"))
    }

    func testHost_isTheGivenName_encodedAsOneSegment_andTheNameStillAppended() {
        let template = URLTemplate("https://h/fleet/{host}/", host: "cam-07")
        XCTAssertTrue(template.usesHost)
        XCTAssertEqual(template.url(id: id, originalName: "a/b c.jpg", createdAt: created), "https://h/fleet/cam-07/a/b%20c.jpg")
        XCTAssertEqual(URLTemplate("https://h/{host}-{name}", host: "x y/z").url(id: id, originalName: "n", createdAt: created),
                       "https://h/x%20y%2Fz-n")
        XCTAssertFalse(URLTemplate("https://h/{date}/", host: "cam-07").usesHost)
        XCTAssertFalse(URLTemplate("https://h/{}/host/").usesHost)
    }

    func testBracesAroundNoWord_areNotPlaceholders_andStayLiteral() throws {
        let template = "https://h/{}/{a b}/{/x}{"
        XCTAssertNoThrow(try URLTemplate.validate(template))
        XCTAssertEqual(URLTemplate(template).url(id: id, originalName: "n", createdAt: created), template)
        XCTAssertEqual(URLTemplate("https://h/{{date}}/").url(id: id, originalName: "n", createdAt: created), "https://h/{2026-03-07}/n")
    }
}
