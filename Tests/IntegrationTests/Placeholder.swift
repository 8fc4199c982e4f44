import XCTest

final class IntegrationTestsPlaceholder: XCTestCase {
    func testBuilds() {}
}
