import XCTest

final class UploadReceiverTestsPlaceholder: XCTestCase {
    func testBuilds() {}
}
