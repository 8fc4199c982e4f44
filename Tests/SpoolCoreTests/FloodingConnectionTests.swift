import SpoolCore
import XCTest

final class FloodingConnectionTests: XCTestCase {
    func testPicksTheConnectionThatReceivedTheMost_atTheLeastRate() {
        let before: [Int32: UInt64] = [5: 1_000, 9: 10_000_000, 12: 300]
        let after: [Int32: UInt64] = [5: 1_200, 9: 14_000_000, 12: 300]
        XCTAssertEqual(FloodingConnection.pick(before: before, after: after, seconds: 0.05, minimumBytesPerSecond: 1_048_576), 9)
    }

    func testTrafficBelowTheRate_isNoFlood() {
        // 40 KiB in 50 ms is 0.8 MB/s: an answer a slow link delivers, not a flood.
        let before: [Int32: UInt64] = [7: 0]
        let after: [Int32: UInt64] = [7: 40 * 1024]
        XCTAssertNil(FloodingConnection.pick(before: before, after: after, seconds: 0.05, minimumBytesPerSecond: 1_048_576))
    }

    func testDescriptorsThatCameOrWentOrWereReused_areNotCandidates() {
        // 3 appeared, 4 went, 6's count went down: closed and its number reused by a new socket.
        let before: [Int32: UInt64] = [4: 0, 6: 90_000_000]
        let after: [Int32: UInt64] = [3: 80_000_000, 6: 100]
        XCTAssertNil(FloodingConnection.pick(before: before, after: after, seconds: 0.05, minimumBytesPerSecond: 1_048_576))
        XCTAssertNil(FloodingConnection.pick(before: [:], after: [:], seconds: 0.05, minimumBytesPerSecond: 1))
    }

    func testEqualTraffic_picksTheLowestDescriptor_soTheChoiceIsStable() {
        let before: [Int32: UInt64] = [8: 0, 3: 0]
        let after: [Int32: UInt64] = [8: 5_000_000, 3: 5_000_000]
        XCTAssertEqual(FloodingConnection.pick(before: before, after: after, seconds: 0.05, minimumBytesPerSecond: 1_048_576), 3)
    }
}
