import SpoolCore
import XCTest

final class CRC32CTests: XCTestCase {
    // RFC 3720 (iSCSI), appendix B.4 "CRC Examples".
    func testRFC3720Vectors() {
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0, count: 32)), 0x8A91_36AA)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)), 0x62A8_AB43)
        XCTAssertEqual(CRC32C.checksum((0..<32).map { UInt8($0) }), 0x46DD_794E)
        XCTAssertEqual(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }), 0x113F_DB5C)
    }

    func testCheckValue() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum("123456789".utf8), 0xE306_9283)
    }

    func testEmptyInput_isZero_andLeavesSeedUnchanged() {
        XCTAssertEqual(CRC32C.checksum([UInt8]()), 0)
        XCTAssertEqual(CRC32C.checksum([UInt8](), seed: 0xE306_9283), 0xE306_9283)
    }

    func testIncremental_equalsOneShot_atEverySplit() {
        var rng = SplitMix64(seed: 7)
        let data = (0..<300).map { _ in rng.nextByte() }
        let whole = CRC32C.checksum(data)
        for split in 0...data.count {
            let first = CRC32C.checksum(data[..<split])
            XCTAssertEqual(CRC32C.checksum(data[split...], seed: first), whole, "split at \(split)")
        }
        // Three pieces, one of them through the byte-at-a-time path.
        let a = CRC32C.checksum(data[0..<100])
        let b = CRC32C.checksum(data[100..<211].lazy.map { $0 }, seed: a)
        XCTAssertEqual(CRC32C.checksum(data[211...], seed: b), whole)
    }

    /// The slicing-by-8 path (contiguous storage, any alignment and length) must agree with the
    /// byte-at-a-time path (a lazy collection has no contiguous storage).
    func testSlicingBy8_agreesWithBytewise_atAnyOffsetAndLength() {
        var rng = SplitMix64(seed: 42)
        let data = (0..<4096).map { _ in rng.nextByte() }
        for _ in 0..<2000 {
            let start = Int(rng.next() % 64)
            let length = Int(rng.next() % 600)
            let slice = data[start..<(start + length)]
            let seed = UInt32(truncatingIfNeeded: rng.next())
            XCTAssertEqual(
                CRC32C.checksum(slice, seed: seed), CRC32C.checksum(slice.lazy.map { $0 }, seed: seed),
                "start \(start) length \(length)")
        }
    }

    func testDetectsEverySingleBitFlip() {
        let data = Array("claim 20261121T141003123Z-0000-9f3ab2c1-photo.jpg pending.a0 inflight.a1".utf8)
        let good = CRC32C.checksum(data)
        for i in data.indices {
            for bit in 0..<8 {
                var d = data
                d[i] ^= 1 << bit
                XCTAssertNotEqual(CRC32C.checksum(d), good)
            }
        }
    }

    /// The table-driven path and the byte-at-a-time path agree on 1 MiB of random bytes (the
    /// throughput is measured by scripts/bench, not here).
    func testSlicingBy8_matchesByteAtATime_onAMebibyte() {
        var rng = SplitMix64(seed: 1)
        let data = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let bytewise = CRC32C.checksum(data.lazy.map { $0 })
        XCTAssertEqual(CRC32C.checksum(data), bytewise)
        XCTAssertNotEqual(bytewise, 0)
    }
}
