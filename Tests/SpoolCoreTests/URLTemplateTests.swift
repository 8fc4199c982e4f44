import SpoolCore
import XCTest

final class URLTemplateTests: XCTestCase {
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-photo.jpg")!

    func testTrailingSlash_appendsTheEncodedOriginalName() {
        XCTAssertEqual(URLTemplate("https://h/up/").url(id: id, originalName: "photo.jpg"), "https://h/up/photo.jpg")
        XCTAssertEqual(URLTemplate("https://h/up/").url(id: id, originalName: "my photo.jpg"), "https://h/up/my%20photo.jpg")
    }

    func testPathBelowIncoming_eachSegmentEncoded_slashesKept() {
        XCTAssertEqual(URLTemplate("https://h/up/").url(id: id, originalName: "2026-11-23/cam 7/fox.jpg"),
                       "https://h/up/2026-11-23/cam%207/fox.jpg")
        XCTAssertEqual(URLTemplate("https://h/{name}?v=1").url(id: id, originalName: "a/b;c"), "https://h/a/b%3Bc?v=1")
    }

    func testDotSegments_areEncodedSoTheyCannotClimb() {
        XCTAssertEqual(URLTemplate.encodePath("../x/./y/.."), "%2E%2E/x/%2E/y/%2E%2E")
        XCTAssertEqual(URLTemplate.encodePath("a..b/.c"), "a..b/.c")
    }

    func testNoSlashNoPlaceholders_usesTheURLAsIs() {
        XCTAssertEqual(URLTemplate("https://h/up").url(id: id, originalName: "a b"), "https://h/up")
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
            URLTemplate("https://h/{id}/{name}?v=1").url(id: id, originalName: "a b;c"),
            "https://h/20261121T141003123Z-0000-9f3ab2c1-photo.jpg/a%20b%3Bc?v=1")
        XCTAssertEqual(URLTemplate("https://h/{name}/{name}").url(id: id, originalName: "x"), "https://h/x/x")
    }

    func testPlaceholders_withTrailingSlash_doNotAlsoAppend() {
        XCTAssertEqual(URLTemplate("https://h/{id}/").url(id: id, originalName: "x"), "https://h/\(id.rawValue)/")
    }

    func testNameThatLooksLikeAPlaceholder_isNotExpandedAgain() {
        XCTAssertEqual(URLTemplate("https://h/{name}").url(id: id, originalName: "{id}"), "https://h/%7Bid%7D")
    }
}
