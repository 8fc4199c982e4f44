import Foundation
import SpoolSystem
import SpoolTransport
import XCTest

/// The one body framing both transports send: framing bytes around a range of the blob, read in
/// pieces of any size, from any position (libcurl's rewind).
final class BodyReaderTests: XCTestCase {
    private func blob(_ bytes: [UInt8], recorded: Int64? = nil) throws -> BlobBody { try BodyFixtures.blob(bytes, recorded: recorded) }

    private func readAll(_ reader: BodyReader, piece: Int) -> [UInt8]? { BodyFixtures.readAll(reader, piece: piece) }

    func testFramingAroundARange_readsWhole_inAnyPieceSize_andFromAnyPosition() throws {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let body = RequestBody([.bytes(Array("head|".utf8)), .blob(try blob(data), offset: 100, length: 300), .bytes(Array("|tail".utf8))])
        let expected = Array("head|".utf8) + data[100..<400] + Array("|tail".utf8)
        XCTAssertEqual(body.length, Int64(expected.count))
        for piece in [1, 3, 5, 64, 4096] {
            XCTAssertEqual(readAll(BodyReader(body), piece: piece), expected, "pieces of \(piece)")
        }
        for position in [0, 4, 5, 6, 304, 305, 306, expected.count] {
            let reader = BodyReader(body)
            XCTAssertTrue(reader.seek(to: Int64(position)))
            XCTAssertEqual(readAll(reader, piece: 7), Array(expected[position...]), "from \(position)")
        }
        XCTAssertFalse(BodyReader(body).seek(to: Int64(expected.count + 1)))
    }

    /// A read of nothing skips nothing (a part is never passed over unread).
    func testAReadOfZeroBytes_skipsNoPart() throws {
        let reader = BodyReader(RequestBody([.bytes([1, 2]), .bytes([3])]))
        XCTAssertEqual(reader.read(into: UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1), count: 0), 0)
        XCTAssertEqual(readAll(reader, piece: 8), [1, 2, 3])
    }

    /// A blob shorter than its recorded size fails the read, and says why.
    func testShrunkBlob_failsTheRead_withTheReason() throws {
        let shrunk = try blob([UInt8](repeating: 9, count: 100), recorded: 200)
        XCTAssertNil(readAll(BodyReader(RequestBody([.blob(shrunk, offset: 0, length: 200)])), piece: 64))
        XCTAssertEqual(shrunk.failure, "its payload shrank while it was sent (ended at 100 B, spooled as 200 B)")
    }
}
