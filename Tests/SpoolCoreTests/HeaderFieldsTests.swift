import SpoolCore
import XCTest

/// Header names are case-insensitive: a field set under one spelling replaces the others.
final class HeaderFieldsTests: XCTestCase {
    func testSet_replacesTheFieldUnderAnySpelling() {
        var fields = ["authorization": "configured", "X-Camera": "7"]
        HeaderFields.set("Authorization", "own", in: &fields)
        XCTAssertEqual(fields, ["Authorization": "own", "X-Camera": "7"])
    }

    func testMerging_theOverridesWin_oneFieldPerName() {
        let merged = HeaderFields.merging(["x-token": "a", "Accept": "x"], ["X-Token": "b", "X-New": "c"])
        XCTAssertEqual(merged, ["X-Token": "b", "Accept": "x", "X-New": "c"])
    }
}
