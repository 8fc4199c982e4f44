import SpoolCore
import XCTest

final class S3TargetTests: XCTestCase {
    let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-n")!
    /// The item's creation time (its json's createdAt): 2026-11-21T14:10:03.123Z, as in the id.
    var created: Timestamp { id.createdAt! }

    func testPathStyle_keyIsPrefixPlusEncodedName() throws {
        let target = try S3Target(parsing: "s3://bucket/in coming/")
        XCTAssertEqual(target.bucket, "bucket")
        let template = target.urlTemplate(endpoint: HTTPOrigin("http://127.0.0.1:9000")!, pathStyle: true)
        XCTAssertEqual(template.url(id: id, originalName: "cam7/fox $1.jpg", createdAt: created),
                       "http://127.0.0.1:9000/bucket/in%20coming/cam7/fox%20%241.jpg")
    }

    func testVirtualHosted_bucketInTheHost_defaultPortLeftOut() throws {
        let target = try S3Target(parsing: "s3://my-bucket/")
        let template = target.urlTemplate(endpoint: HTTPOrigin(S3Target.defaultEndpoint(region: "eu-west-1"))!, pathStyle: false)
        XCTAssertEqual(template.url(id: id, originalName: "a.txt", createdAt: created), "https://my-bucket.s3.eu-west-1.amazonaws.com/a.txt")
    }

    func testPlaceholders_keptThroughTheEncoding() throws {
        let target = try S3Target(parsing: "s3://bucket/x y/{id}-{name}")
        let url = target.urlTemplate(endpoint: HTTPOrigin("http://localhost:1")!, pathStyle: true)
            .url(id: id, originalName: "d/e f", createdAt: created)
        XCTAssertEqual(url, "http://localhost:1/bucket/x%20y/\(id.rawValue)-d/e%20f")
    }

    func testDateParts_inThePrefix_keyIsTheDatedPrefixPlusTheName() throws {
        let target = try S3Target(parsing: "s3://bucket/cam 7/{date}/{hour}/")
        let template = target.urlTemplate(endpoint: HTTPOrigin("http://127.0.0.1:9")!, pathStyle: true)
        XCTAssertEqual(template.template, "http://127.0.0.1:9/bucket/cam%207/{date}/{hour}/")
        XCTAssertEqual(template.url(id: id, originalName: "d/e f", createdAt: created), "http://127.0.0.1:9/bucket/cam%207/2026-11-21/14/d/e%20f")
        let hourLater = created.adding(seconds: 3600)
        XCTAssertEqual(template.url(id: id, originalName: "d/e f", createdAt: hourLater), "http://127.0.0.1:9/bucket/cam%207/2026-11-21/15/d/e%20f")
    }

    func testHost_inThePrefix_keyIsTheHostsPrefixPlusTheName() throws {
        let target = try S3Target(parsing: "s3://bucket/fleet/{host}/")
        let template = target.urlTemplate(endpoint: HTTPOrigin("http://127.0.0.1:9")!, pathStyle: true, host: "cam-07")
        XCTAssertEqual(template.template, "http://127.0.0.1:9/bucket/fleet/{host}/")
        XCTAssertEqual(template.url(id: id, originalName: "d/e f", createdAt: created), "http://127.0.0.1:9/bucket/fleet/cam-07/d/e%20f")
    }

    func testParse_unknownPlaceholder_isRefused_bracesAroundNoWordAreKeyText() throws {
        XCTAssertThrowsError(try S3Target(parsing: "s3://bucket/{nmae}/")) { error in
            XCTAssertTrue("\(error)".hasPrefix("unknown placeholder {nmae} (known: {name} {id} {host} {date}"), "\(error)")
        }
        let target = try S3Target(parsing: "s3://bucket/a{}b/")
        XCTAssertEqual(target.urlTemplate(endpoint: HTTPOrigin("http://127.0.0.1:9")!, pathStyle: true)
            .url(id: id, originalName: "n", createdAt: created), "http://127.0.0.1:9/bucket/a%7B%7Db/n")
    }

    func testBucketOnly_keyIsTheName() throws {
        let target = try S3Target(parsing: "s3://bucket")
        XCTAssertEqual(target.keyTemplate, "")
        XCTAssertEqual(target.urlTemplate(endpoint: HTTPOrigin("http://127.0.0.1:9")!, pathStyle: true)
            .url(id: id, originalName: "n", createdAt: created), "http://127.0.0.1:9/bucket/n")
    }

    func testParse_rejectsBadBucketsAndKeys() {
        for url in ["s3://", "s3://ab/", "s3://Bucket/", "s3://-bucket/", "s3://bu_cket/", "s3://bucket/a?b", "http://x/"] {
            XCTAssertThrowsError(try S3Target(parsing: url), url)
        }
    }

    func testNeedsPathStyle_forIPAddressesAndLocalhost() {
        XCTAssertTrue(S3Target.needsPathStyle(host: "127.0.0.1"))
        XCTAssertTrue(S3Target.needsPathStyle(host: "localhost"))
        XCTAssertTrue(S3Target.needsPathStyle(host: "[::1]"))
        XCTAssertFalse(S3Target.needsPathStyle(host: "s3.us-east-1.amazonaws.com"))
        XCTAssertFalse(S3Target.needsPathStyle(host: "minio.example"))
    }
}
