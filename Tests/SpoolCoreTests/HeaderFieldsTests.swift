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

    func testRequest_itemHeadersWin_exceptOverTheOperatorsCredentials_secretsWinOverAll() {
        let headers = HeaderFields.request(
            operator: ["authorization": "Bearer operator", "X-Camera": "0", "Accept": "x"],
            item: ["Authorization": "Bearer item", "x-camera": "7", "Cookie": "c=1"],
            secrets: ["X-Api-Key": "k"])
        XCTAssertEqual(headers, ["authorization": "Bearer operator", "x-camera": "7", "Accept": "x", "Cookie": "c=1", "X-Api-Key": "k"])
        // No credential configured: the item's own goes out; a secret of the same name wins over it.
        XCTAssertEqual(HeaderFields.request(operator: [:], item: ["Authorization": "Bearer item"], secrets: [:]),
                       ["Authorization": "Bearer item"])
        XCTAssertEqual(HeaderFields.request(operator: [:], item: ["Authorization": "Bearer item"], secrets: ["AUTHORIZATION": "s"]),
                       ["AUTHORIZATION": "s"])
    }

    func testSidecarOwnerRule_theFilesOwnerRootOrTheDaemon() {
        XCTAssertNil(SidecarOwnerRule.refusal(sidecar: 1235, file: 1235, daemon: 999))
        XCTAssertNil(SidecarOwnerRule.refusal(sidecar: 0, file: 1235, daemon: 999))
        XCTAssertNil(SidecarOwnerRule.refusal(sidecar: 999, file: 1235, daemon: 999))
        XCTAssertEqual(SidecarOwnerRule.refusal(sidecar: 1234, file: 1235, daemon: 999)?.hasPrefix("sidecar belongs to uid 1234, the file to uid 1235"), true)
    }
}
