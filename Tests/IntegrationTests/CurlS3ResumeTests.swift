import SpoolStore
import XCTest

/// `S3ResumeTests` with `--transport curl`: crash points and a kill -9 mid-upload, the parts sent
/// by libcurl. `show` and `purge` (which aborts over its own URLSession) run once, in the parent;
/// so does the kill -9 mid-upload, whose resume is the part log's and ListParts', both covered
/// here by the crash table.
final class CurlS3ResumeTests: S3ResumeTests {
    override class var transportArguments: [String] { ["--transport", "curl"] }
    /// The points where the transport matters (a resume by ListParts, a recorded completion); the
    /// others cut the part log's writes, which are the same with either transport.
    override class var crashTable: [(CrashPoint, Int)] { [(.multipartAfterPart, 2), (.multipartAfterComplete, 1)] }

    override func testTable_coversEveryMultipartCrashPoint() {}
    override func testKill9_midUpload_resumesFromTheLog() throws {
        throw XCTSkip("the resume is above the transport: run by S3ResumeTests; crash points run here")
    }
    override func testShowThenPurge_showsThePartsDone_thenAbortsTheMultipartUpload() throws {
        throw XCTSkip("does not involve the daemon's transport: run by S3ResumeTests")
    }
}
