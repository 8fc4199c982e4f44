import XCTest

/// `S3Tests` with `--transport curl`: every S3 request, the multipart steps included, goes
/// through libcurl. The usage errors and the credentials file do not involve the transport and
/// run once, in the parent class; so do the pause and abort rules, which sit above the transport
/// (one configuration refusal still runs here, to read an S3 error body through libcurl).
final class CurlS3Tests: S3Tests {
    override class var transportArguments: [String] { ["--transport", "curl"] }

    private func transportIndependent() throws { throw XCTSkip("does not involve the transport: run by S3Tests") }

    override func testPartSize_outOfS3sLimits_isAUsageError() throws { try transportIndependent() }
    override func testCredentialsFile_profileIsUsed() throws { try transportIndependent() }
    override func testCredentialsFile_rewrittenDuringThePause_isReadAgain_andUploadsResume() throws { try transportIndependent() }
    override func testMissingCredentials_isAUsageError() throws { try transportIndependent() }
    override func testS3Options_withoutAnS3URL_orWithPOST_areUsageErrors() throws { try transportIndependent() }
    override func testWrongSecret_onAMultipartItem_pausesToo() throws { try transportIndependent() }
    override func testMissingBucket_pausesAsAConfigurationProblem() throws { try transportIndependent() }
    override func testGivingUp_abortsTheMultipartUpload() throws { try transportIndependent() }
    override func testDateParts_inThePrefix_areEachItemsRecordedCreationTime() throws { try transportIndependent() }
}
