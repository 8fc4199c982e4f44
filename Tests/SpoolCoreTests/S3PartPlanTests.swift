import SpoolCore
import XCTest

final class S3PartPlanTests: XCTestCase {
    func testEqualParts_theLastOneShorter() {
        let plan = S3PartPlan(size: (10 << 20) + 5, preferredPartSize: 5 << 20)
        XCTAssertEqual(plan.partCount, 3)
        XCTAssertEqual(plan.range(ofPart: 1).offset, 0)
        XCTAssertEqual(plan.range(ofPart: 2).offset, 5 << 20)
        XCTAssertEqual(plan.range(ofPart: 3).offset, 10 << 20)
        XCTAssertEqual(plan.range(ofPart: 3).length, 5)
    }

    func testPartSize_raisedToS3sMinimum() {
        XCTAssertEqual(S3PartPlan(size: 100 << 20, preferredPartSize: 1 << 20).partSize, 5 << 20)
    }

    func testHugeBlob_growsThePartSize_toStayWithinTenThousandParts() {
        let size: Int64 = 1 << 40  // 1 TiB at 16 MiB parts would be 65,536 parts
        let plan = S3PartPlan(size: size, preferredPartSize: 16 << 20)
        XCTAssertLessThanOrEqual(plan.partCount, 10_000)
        XCTAssertEqual(plan.partSize % (1 << 20), 0, "whole MiB")
        XCTAssertEqual(plan.range(ofPart: plan.partCount).offset + plan.range(ofPart: plan.partCount).length, size)
    }

    func testCompletionBody_listsETagsInOrder_escaped() {
        XCTAssertEqual(
            S3PartPlan.completionBody(etags: ["\"a\"", "b&<c>"]),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"a\"</ETag></Part><Part><PartNumber>2</PartNumber><ETag>b&amp;&lt;c&gt;</ETag></Part></CompleteMultipartUpload>")
    }

    func testElement_readsTheUploadId() {
        let xml = "<InitiateMultipartUploadResult><Bucket>b</Bucket><UploadId>VXBsb2Fk</UploadId></InitiateMultipartUploadResult>"
        XCTAssertEqual(S3PartPlan.element("UploadId", in: xml), "VXBsb2Fk")
        XCTAssertNil(S3PartPlan.element("UploadId", in: "<UploadId></UploadId>"))
    }
}
