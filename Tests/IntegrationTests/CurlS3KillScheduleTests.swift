import XCTest

/// `S3KillScheduleTests` with `--transport curl`: the kill schedule, a lost completion answer
/// (libcurl reports the dropped connection its own way) and aborts answered 503, every request
/// sent by libcurl.
final class CurlS3KillScheduleTests: S3KillScheduleTests {
    override class var transportArguments: [String] { ["--transport", "curl"] }

    override func testUploadTheStoreLost_startsOver_saidAndCounted() throws {
        throw XCTSkip("the store's NoSuchUpload at ListParts is read above the transport: run by S3KillScheduleTests")
    }
}
