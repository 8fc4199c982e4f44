import Foundation
import XCTest

@testable import SpoolTransport

final class BodyRateGateTests: XCTestCase {
    /// A rate-limited body is read in pieces no larger than the bucket, and still whole.
    func testBodyReads_takeAtMostTheBurst_andTheBodyArrivesWhole() {
        let body = (0..<6_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let rate = BodyRateGate(bytesPerSecond: 40_000)  // a burst of 2,000 bytes
        let stream = BodyInputStream(BodyReader(RequestBody([.bytes(Array(body.prefix(1_000))), .bytes(Array(body.dropFirst(1_000)))]), rate: rate))
        stream.open()
        var read: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var pieces: [Int] = []
        while true {
            let n = stream.read(&buffer, maxLength: buffer.count)
            XCTAssertGreaterThanOrEqual(n, 0)
            if n <= 0 { break }
            pieces.append(n)
            read += buffer.prefix(n)
        }
        XCTAssertEqual(read, body)
        XCTAssertTrue(pieces.allSatisfy { $0 <= 2_000 }, "\(pieces)")
        XCTAssertGreaterThan(pieces.count, 1)
        XCTAssertEqual(rate.bytesGranted, Int64(body.count), "every byte went through the gate")
    }

    /// The stall watch's allowance: every body before this one may hold the gate for a turn.
    func testLongestTurn_growsWithTheReaders_andWithATinyRate() {
        XCTAssertEqual(BodyRateGate(bytesPerSecond: 1 << 20).longestTurnSeconds(readers: 4), 0.2, accuracy: 1e-4)
        XCTAssertEqual(BodyRateGate(bytesPerSecond: 2).longestTurnSeconds(readers: 4), 2, accuracy: 1e-9)
    }
}
