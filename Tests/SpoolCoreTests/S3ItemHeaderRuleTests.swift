import SpoolCore
import XCTest

final class S3ItemHeaderRuleTests: XCTestCase {
    func testByDefault_anItemDecidesItsObjectOnly() throws {
        let rule = try S3ItemHeaderRule()
        for name in ["x-amz-meta-camera", "X-Amz-Meta-A", "Content-Type", "content-disposition"] { XCTAssertNil(rule.refusal(for: name), name) }
        for name in ["x-amz-acl", "x-amz-grant-read", "x-amz-storage-class", "x-amz-server-side-encryption-customer-key",
                     "x-amz-object-lock-mode", "x-amz-website-redirect-location", "Authorization", "X-Camera", "Cache-Control"] {
            XCTAssertTrue(rule.refusal(for: name)?.contains("--s3-allow-header") == true, name)
        }
        XCTAssertTrue(rule.refusal(for: "X-Amz-Copy-Source")?.contains("never sent to S3") == true)
        XCTAssertEqual(rule.refusal(forHeaders: ["x-amz-meta-a": "1", "x-amz-acl": "public-read"])?.contains("'x-amz-acl'"), true)
        XCTAssertNil(rule.refusal(forHeaders: ["x-amz-meta-a": "1"]))
    }

    func testAllowList_namesAndPrefixes_neverCopySource() throws {
        let rule = try S3ItemHeaderRule(allowing: ["X-Amz-Storage-Class", "x-amz-object-lock-*"])
        XCTAssertNil(rule.refusal(for: "x-amz-storage-class"))
        XCTAssertNil(rule.refusal(for: "x-amz-object-lock-mode"))
        XCTAssertNotNil(rule.refusal(for: "x-amz-acl"))
        XCTAssertNotNil(rule.refusal(for: "x-amz-copy-source-range"))
        for pattern in ["x-amz-copy-source", "x-amz-copy-source-if-match", "x-amz-*", "x-amz-copy*", "X-*", "*"] {
            XCTAssertThrowsError(try S3ItemHeaderRule(allowing: [pattern]), pattern)
        }
        XCTAssertThrowsError(try S3ItemHeaderRule(allowing: ["x amz"])) { XCTAssertTrue("\($0)".contains("not a header name")) }
    }
}
