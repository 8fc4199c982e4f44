import SpoolCore
import XCTest

/// Which items `--compress` sends compressed, and the part size of a compressed S3 upload.
final class CompressionRuleTests: XCTestCase {
    func testCompressedFormats_smallItems_andItemsWithTheirOwnCoding_goAsTheyAre() {
        func reason(_ name: String, _ type: String = "application/octet-stream", size: Int64 = 10_000, headers: [String: String] = [:]) -> String? {
            CompressionRule.skipReason(name: name, contentType: type, size: size, headers: headers)
        }
        XCTAssertNil(reason("readings.csv", "text/csv"))
        XCTAssertNil(reason("cam7/2026-11-26/log.txt", "text/plain; charset=utf-8"))
        XCTAssertNil(reason("archive.tar"), "a tar is not compressed")
        XCTAssertEqual(reason("cam7/fox.JPG"), "a compressed format (.jpg)")
        for name in ["a.png", "a.gif", "a.webp", "a.mp4", "a.mov", "a.mkv", "a.zip", "a.gz", "a.tgz", "a.bz2", "a.xz", "a.zst", "a.7z", "a.rar", "a.docx"] {
            XCTAssertNotNil(reason(name), name)
        }
        XCTAssertEqual(reason("upload", "image/jpeg"), "a compressed format (image/jpeg)")
        XCTAssertEqual(reason("clip", "Video/MP4; codecs=avc1"), "a compressed format (video/mp4)")
        XCTAssertEqual(reason("x", "application/gzip"), "a compressed format (application/gzip)")
        XCTAssertNil(reason("x", "image/svg+xml"), "SVG is text")
        XCTAssertNil(reason(".gz"), "a dot file has no extension")
        XCTAssertEqual(reason("tiny.csv", size: 1023), "smaller than 1024 B")
        XCTAssertNil(reason("tiny.csv", size: 1024))
        XCTAssertEqual(reason("data.csv", headers: ["content-encoding": "br"]), "it has its own Content-Encoding")
    }

    func testCompressedPartSize_aimsParts_atAboutThePreferredSizeCompressed() {
        let mib: Int64 = 1 << 20
        XCTAssertEqual(S3PartPlan.compressedPartSize(preferredPartSize: 16 * mib, compressedRatio: 0.25), 71 * mib, "16 / 0.25 * 1.1 = 70.4, up")
        XCTAssertEqual(S3PartPlan.compressedPartSize(preferredPartSize: 5 * mib, compressedRatio: 0.76), 8 * mib)
        XCTAssertEqual(S3PartPlan.compressedPartSize(preferredPartSize: 16 * mib, compressedRatio: 1.01), 16 * mib, "does not shrink: as preferred")
        XCTAssertEqual(S3PartPlan.compressedPartSize(preferredPartSize: 16 * mib, compressedRatio: 0.001), S3PartPlan.maximumPartSize)
        XCTAssertEqual(S3PartPlan.compressedPartSize(preferredPartSize: 16 * mib, compressedRatio: 0), 16 * mib)
    }
}
