import SpoolCore
import XCTest

/// Deterministic PRNG for tests (Steele, Lea & Flood's SplitMix64).
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextByte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// A header and records, with the byte range of each framed line.
private struct Log {
    var bytes: [UInt8]
    var records: [IndexRecord]
    /// `bounds[0]` is the header's end; `bounds[k]` is the end of record `k - 1`.
    var bounds: [Int]

    init(_ records: [IndexRecord]) {
        self.records = records
        bytes = IndexLogCodec.encodeHeader()
        bounds = [bytes.count]
        for r in records {
            bytes += IndexLogCodec.encode(r)
            bounds.append(bytes.count)
        }
    }

    func start(ofRecord k: Int) -> Int { bounds[k] }
    func end(ofRecord k: Int) -> Int { bounds[k + 1] }
}

private func makeRecords(_ n: Int, seed: UInt64 = 1) -> [IndexRecord] {
    var gen = ItemIDGenerator(processTag: 0x9f3a_b2c1)
    var rng = SplitMix64(seed: seed)
    let ops = IndexRecord.Operation.allCases
    let states = ItemState.allCases
    func location() -> ItemLocation? {
        rng.below(5) == 0 ? nil : ItemLocation(states[rng.below(states.count)], attempt: rng.below(12))
    }
    return (0..<n).map { i in
        let id = gen.next(
            at: Timestamp(millisecondsSinceEpoch: 1_795_000_000_000 + Int64(i / 3)),
            originalName: i % 4 == 0 ? nil : "photo \(i).jpg")
        return IndexRecord(ops[i % ops.count], id, from: location(), to: location())
    }
}

private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

private func crcHex(_ payload: [UInt8]) -> String {
    let h = String(CRC32C.checksum(payload), radix: 16)
    return String(repeating: "0", count: 8 - h.count) + h
}

final class IndexLogCodecTests: XCTestCase {
    // MARK: Encoding

    func testEncoding_isTheDocumentedLine() {
        XCTAssertEqual(String(decoding: IndexLogCodec.encode(payload: "123456789"), as: UTF8.self), "R 9 e3069283 123456789\n")
        let header = String(decoding: IndexLogCodec.encodeHeader(), as: UTF8.self)
        XCTAssertEqual(header, "R 14 \(crcHex(bytes("spoold-index 1"))) spoold-index 1\n")
        let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-photo.jpg")!
        let r = IndexRecord(.claim, id, from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1))
        let payload = "claim 20261121T141003123Z-0000-9f3ab2c1-photo.jpg pending.a0 inflight.a1"
        XCTAssertEqual(
            String(decoding: IndexLogCodec.encode(r), as: UTF8.self),
            "R \(payload.utf8.count) \(crcHex(bytes(payload))) \(payload)\n")
    }

    func testCRCField_isAlwaysEightLowercaseHexDigits() {
        // Pick payloads whose checksums have leading zero nibbles and letters.
        var sawLeadingZero = false
        for i in 0..<2000 {
            let line = IndexLogCodec.encode(payload: "p\(i)")
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 3)
            XCTAssertEqual(fields[2].count, 8)
            XCTAssertTrue(fields[2].allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
            if fields[2].first == UInt8(ascii: "0") { sawLeadingZero = true }
        }
        XCTAssertTrue(sawLeadingZero)
    }

    // MARK: Round trip

    func testRoundTrip_everyOperation_withAndWithoutLocations() {
        var gen = ItemIDGenerator(processTag: 1)
        var records: [IndexRecord] = []
        let locations: [ItemLocation?] = [nil] + ItemState.allCases.flatMap { s in
            [ItemLocation(s, attempt: 0), ItemLocation(s, attempt: 3), ItemLocation(s, attempt: 9_999)]
        }
        for op in IndexRecord.Operation.allCases {
            for from in locations {
                for to in locations {
                    let id = gen.next(at: Timestamp(millisecondsSinceEpoch: 1_000), originalName: "x\(records.count)")
                    records.append(IndexRecord(op, id, from: from, to: to))
                }
            }
        }
        let log = Log(records)
        let scan = IndexLogCodec.decode(log.bytes)
        XCTAssertEqual(scan, IndexLogScan(records: records, validLength: log.bytes.count, damage: .none, version: 1))
        XCTAssertEqual(scan.records.count, IndexRecord.Operation.allCases.count * 13 * 13)
    }

    func testRoundTrip_longestID() {
        let id = ItemID("20261121T141003123Z-" + String(repeating: "a", count: ItemID.maximumLength - 20))!
        let r = IndexRecord(.live, id, from: ItemLocation(.inflight, attempt: 9_999), to: nil)
        let log = Log([r, r])
        XCTAssertEqual(IndexLogCodec.decode(log.bytes).records, [r, r])
    }

    func testEmptyFile_isAFreshLog() {
        XCTAssertEqual(IndexLogCodec.decode([]), IndexLogScan(records: [], validLength: 0, damage: .none, version: nil))
    }

    func testHeaderOnly() {
        let h = IndexLogCodec.encodeHeader()
        XCTAssertEqual(IndexLogCodec.decode(h), IndexLogScan(records: [], validLength: h.count, damage: .none, version: 1))
    }

    // MARK: Index torture: truncation

    /// Truncate at every byte offset of the file (which includes every offset of the last three
    /// records): the records fully before the cut survive, and damage is .none only at a boundary.
    func testTruncation_atEveryByte() {
        let log = Log(makeRecords(20))
        let lastThreeStart = log.start(ofRecord: 17)
        var checkedInLastThree = 0
        for cut in 0...log.bytes.count {
            let scan = IndexLogCodec.decode(Array(log.bytes[..<cut]))
            let whole = log.bounds.filter { $0 <= cut }
            if whole.isEmpty {  // inside the header
                XCTAssertEqual(scan.records, [], "cut \(cut)")
                XCTAssertEqual(scan.validLength, 0)
                XCTAssertEqual(scan.damage, cut == 0 ? .none : .tornTail(offset: 0, length: cut), "cut \(cut)")
                XCTAssertNil(scan.version)
                continue
            }
            let kept = whole.count - 1
            XCTAssertEqual(scan.records, Array(log.records.prefix(kept)), "cut \(cut)")
            XCTAssertEqual(scan.validLength, whole.last!, "cut \(cut)")
            XCTAssertEqual(scan.version, 1)
            if log.bounds.contains(cut) {
                XCTAssertEqual(scan.damage, .none, "cut \(cut)")
            } else {
                XCTAssertEqual(scan.damage, .tornTail(offset: scan.validLength, length: cut - scan.validLength), "cut \(cut)")
            }
            if cut >= lastThreeStart { checkedInLastThree += 1 }
        }
        XCTAssertEqual(checkedInLastThree, log.bytes.count - lastThreeStart + 1)
    }

    /// A torn write often leaves the file at its new size with zeros where the data should be.
    func testTruncation_thenZeroFilledToOriginalLength() {
        let log = Log(makeRecords(20))
        for cut in log.start(ofRecord: 17)..<log.bytes.count {
            var b = Array(log.bytes[..<cut])
            b += [UInt8](repeating: 0, count: log.bytes.count - cut)
            let scan = IndexLogCodec.decode(b)
            let kept = log.bounds.filter { $0 <= cut }.count - 1
            XCTAssertEqual(scan.records, Array(log.records.prefix(kept)), "cut \(cut)")
            XCTAssertEqual(scan.damage, .tornTail(offset: log.bounds[kept], length: b.count - log.bounds[kept]), "cut \(cut)")
        }
    }

    // MARK: Index torture: flips

    /// Flips each bit (and each whole byte) of `range` in turn; every copy must decode to `expected`.
    private func assertEveryBitFlip(
        of bytes: [UInt8], in range: Range<Int>, decodesTo expected: IndexLogScan, file: StaticString = #filePath, line: UInt = #line
    ) {
        for i in range {
            for mask in [0xFF, 1, 2, 4, 8, 16, 32, 64, 128] as [UInt8] {
                var b = bytes
                b[i] ^= mask
                XCTAssertEqual(IndexLogCodec.decode(b), expected, "byte \(i) mask \(mask)", file: file, line: line)
            }
        }
    }

    func testFlipEveryByteAndBit_ofTheLastRecord_dropsItAsATornTail() {
        let log = Log(makeRecords(20))
        let start = log.start(ofRecord: 19), end = log.end(ofRecord: 19)
        let expected = IndexLogScan(
            records: Array(log.records.prefix(19)), validLength: start,
            damage: .tornTail(offset: start, length: end - start), version: 1)
        assertEveryBitFlip(of: log.bytes, in: start..<end, decodesTo: expected)
    }

    func testFlipEveryByteAndBit_ofAMiddleRecord_isCorruptMiddle() {
        let log = Log(makeRecords(20))
        let start = log.start(ofRecord: 9), end = log.end(ofRecord: 9)
        let expected = IndexLogScan(
            records: Array(log.records.prefix(9)), validLength: start, damage: .corruptMiddle(offset: start), version: 1)
        assertEveryBitFlip(of: log.bytes, in: start..<end, decodesTo: expected)
    }

    func testFlipEveryByte_ofTheHeader_isDamageAtZero() {
        let log = Log(makeRecords(5))
        for i in 0..<log.bounds[0] {
            var b = log.bytes
            b[i] ^= 0x20
            XCTAssertEqual(
                IndexLogCodec.decode(b), IndexLogScan(records: [], validLength: 0, damage: .corruptMiddle(offset: 0), version: nil),
                "byte \(i)")
            // Header damaged and nothing else valid: torn from 0.
            let headerOnly = Array(b[..<log.bounds[0]])
            XCTAssertEqual(IndexLogCodec.decode(headerOnly).damage, .tornTail(offset: 0, length: headerOnly.count), "byte \(i)")
        }
    }

    // MARK: Index torture: zero and garbage tails

    func testZeroTails_areTorn_andKeepEveryRecord() {
        let log = Log(makeRecords(20))
        for n in [1, 7, 4096] {
            let scan = IndexLogCodec.decode(log.bytes + [UInt8](repeating: 0, count: n))
            XCTAssertEqual(
                scan, IndexLogScan(records: log.records, validLength: log.bytes.count, damage: .tornTail(offset: log.bytes.count, length: n), version: 1),
                "\(n) zeros")
        }
    }

    func testFileOfZeros_isTornFromZero() {
        for n in [1, 14, 4096] {
            XCTAssertEqual(
                IndexLogCodec.decode([UInt8](repeating: 0, count: n)),
                IndexLogScan(records: [], validLength: 0, damage: .tornTail(offset: 0, length: n), version: nil))
        }
    }

    func testRandomGarbageTails_areTorn_andKeepEveryRecord() {
        let log = Log(makeRecords(20))
        var rng = SplitMix64(seed: 0x5EED)
        // Pieces that look like the start of a record, so the scan has to look past the prefix.
        // Random bytes are never a newline, so every line starts with one of these: none can be
        // completed into a valid frame except by a CRC collision.
        let lookalikes: [[UInt8]] = [
            bytes("\nR "), bytes("\nR 12 "), bytes("\nR 4096 deadbeef "), bytes("\nR 9 00000000 123456789\n"),
            bytes("\n"), [10, 0, 0, 0], bytes("\nR 9 e3069283 123456789"),  // the last: valid but for its missing newline at EOF
        ]
        for round in 0..<500 {
            var tail: [UInt8] = []
            let target = 1 + rng.below(round % 10 == 0 ? 20_000 : 300)
            while tail.count < target {
                if rng.below(4) == 0 {
                    tail += lookalikes[rng.below(lookalikes.count - 1)]
                } else {
                    var byte = rng.nextByte()
                    if byte == 10 { byte = 11 }
                    tail.append(byte)
                }
            }
            if round % 3 == 0 { tail += lookalikes.last! }
            let scan = IndexLogCodec.decode(log.bytes + tail)
            XCTAssertEqual(
                scan, IndexLogScan(records: log.records, validLength: log.bytes.count, damage: .tornTail(offset: log.bytes.count, length: tail.count), version: 1),
                "round \(round)")
        }
    }

    func testGarbage_thenAValidRecordOnANewLine_isCorruptMiddle() {
        let log = Log(makeRecords(3))
        let extra = IndexLogCodec.encode(makeRecords(1, seed: 9)[0])
        for garbage in [bytes("x\n"), [0, 0, 0, 10], bytes("R 3 00000000 abc\n"), bytes("\n")] {
            let scan = IndexLogCodec.decode(log.bytes + garbage + extra)
            XCTAssertEqual(
                scan, IndexLogScan(records: log.records, validLength: log.bytes.count, damage: .corruptMiddle(offset: log.bytes.count), version: 1))
        }
    }

    /// A record counts only at the start of a line: glued to garbage, it is part of the garbage.
    func testGarbageWithoutNewline_thenARecord_isOneTornLine() {
        let log = Log(makeRecords(3))
        let extra = IndexLogCodec.encode(makeRecords(1, seed: 9)[0])
        let tail = [0, 0, 0] + extra
        XCTAssertEqual(
            IndexLogCodec.decode(log.bytes + tail),
            IndexLogScan(records: log.records, validLength: log.bytes.count, damage: .tornTail(offset: log.bytes.count, length: tail.count), version: 1))
    }

    // MARK: Framing rules

    /// A line built by hand after the header and three records; returns the scan and the line's offset.
    private func decodeWith(line: [UInt8], thenValidRecord: Bool) -> (IndexLogScan, Int, [IndexRecord]) {
        let log = Log(makeRecords(3))
        var b = log.bytes + line
        if thenValidRecord { b += IndexLogCodec.encode(makeRecords(1, seed: 3)[0]) }
        return (IndexLogCodec.decode(b), log.bytes.count, log.records)
    }

    private func assertNotAFrame(_ line: [UInt8], _ message: String, file: StaticString = #filePath, line l: UInt = #line) {
        let (torn, at, records) = decodeWith(line: line, thenValidRecord: false)
        XCTAssertEqual(torn.records, records, message, file: file, line: l)
        XCTAssertEqual(torn.damage, .tornTail(offset: at, length: line.count), message, file: file, line: l)
        let (middle, at2, _) = decodeWith(line: line, thenValidRecord: true)
        XCTAssertEqual(middle.records, records, message, file: file, line: l)
        XCTAssertEqual(middle.damage, .corruptMiddle(offset: at2), message, file: file, line: l)
    }

    private func frame(len: String, crc: String, payload: [UInt8], newline: Bool = true) -> [UInt8] {
        bytes("R \(len) \(crc) ") + payload + (newline ? [10] : [])
    }

    func testFramingViolations_areNotRecords() {
        let record = makeRecords(1, seed: 5)[0]
        let p = bytes(record.description)
        let good = frame(len: "\(p.count)", crc: crcHex(p), payload: p)
        XCTAssertEqual(good, IndexLogCodec.encode(record))  // the baseline is a good record
        XCTAssertEqual(decodeWith(line: good, thenValidRecord: false).0.damage, .none)

        assertNotAFrame(frame(len: "\(p.count + 1)", crc: crcHex(p), payload: p), "length one too big")
        assertNotAFrame(frame(len: "\(p.count - 1)", crc: crcHex(p), payload: p), "length one too small")
        assertNotAFrame(frame(len: "0\(p.count)", crc: crcHex(p), payload: p), "leading zero")
        assertNotAFrame(frame(len: "+\(p.count)", crc: crcHex(p), payload: p), "sign")
        assertNotAFrame(frame(len: "7x", crc: crcHex(p), payload: p), "non-digit length")
        assertNotAFrame(frame(len: "", crc: crcHex(p), payload: p), "empty length")
        assertNotAFrame(frame(len: "\(p.count)", crc: crcHex(p).uppercased(), payload: p), "uppercase hex")
        assertNotAFrame(frame(len: "\(p.count)", crc: "0" + crcHex(p), payload: p), "nine hex digits")
        assertNotAFrame(frame(len: "\(p.count)", crc: String(crcHex(p).dropFirst()), payload: p), "seven hex digits")
        assertNotAFrame(frame(len: "\(p.count)", crc: "00000000", payload: p), "wrong checksum")
        assertNotAFrame(frame(len: "\(p.count)", crc: crcHex(p), payload: p + [13]), "CR before LF")
        assertNotAFrame(bytes(" ") + good, "leading space")
        assertNotAFrame(bytes("r") + good.dropFirst(), "lowercase r")
        assertNotAFrame(bytes("R  \(p.count) \(crcHex(p)) ") + p + [10], "double space")
        assertNotAFrame(bytes("R\t\(p.count) \(crcHex(p)) ") + p + [10], "tab")
        assertNotAFrame(frame(len: "0", crc: "00000000", payload: []), "empty payload")

        let withNul = bytes("add") + [0] + bytes("x")
        assertNotAFrame(frame(len: "\(withNul.count)", crc: crcHex(withNul), payload: withNul), "NUL in payload")

        let big = [UInt8](repeating: UInt8(ascii: "a"), count: 4097)
        assertNotAFrame(frame(len: "4097", crc: crcHex(big), payload: big), "payload over 4096")
        let huge = [UInt8](repeating: UInt8(ascii: "a"), count: 10_000)
        assertNotAFrame(frame(len: "10000", crc: crcHex(huge), payload: huge), "five-digit length")
    }

    func testMissingNewlineAtEOF_isTorn() {
        let log = Log(makeRecords(5))
        let b = Array(log.bytes.dropLast())
        XCTAssertEqual(
            IndexLogCodec.decode(b),
            IndexLogScan(records: Array(log.records.prefix(4)), validLength: log.start(ofRecord: 4),
                         damage: .tornTail(offset: log.start(ofRecord: 4), length: b.count - log.start(ofRecord: 4)), version: 1))
    }

    // MARK: Valid frames that are not records (decision: bad record, never a torn tail)

    func testMaximumLengthFrame_isAValidFrame_butNotARecord() {
        let max = String(repeating: "a", count: IndexLogCodec.maximumPayloadLength)
        let line = IndexLogCodec.encode(payload: max)
        XCTAssertTrue(line.starts(with: bytes("R 4096 ")))
        let (scan, at, records) = decodeWith(line: line, thenValidRecord: false)
        XCTAssertEqual(scan, IndexLogScan(records: records, validLength: at, damage: .corruptMiddle(offset: at), version: 1))
    }

    func testUnknownOperation_isABadRecord_andNotTruncatedAway() {
        let known = makeRecords(1, seed: 2)[0]
        let unknown = "compact" + known.description.drop(while: { $0 != " " })
        XCTAssertNil(IndexRecord(payload: unknown[...]))
        for thenValid in [false, true] {
            let (scan, at, records) = decodeWith(line: IndexLogCodec.encode(payload: unknown), thenValidRecord: thenValid)
            XCTAssertEqual(scan, IndexLogScan(records: records, validLength: at, damage: .corruptMiddle(offset: at), version: 1))
        }
    }

    /// `ItemLocation` parses at most four attempt digits, so a record with attempt 10000 encodes
    /// but cannot be read back. The codec must then keep the file (corruptMiddle), not truncate it.
    func testRecordThatDoesNotParseBack_isKeptNotTruncated() {
        let id = makeRecords(1)[0].id
        let r = IndexRecord(.requeue, id, from: ItemLocation(.inflight, attempt: 10_000), to: nil)
        XCTAssertNil(IndexRecord(payload: r.description[...]))
        let (scan, at, records) = decodeWith(line: IndexLogCodec.encode(r), thenValidRecord: false)
        XCTAssertEqual(scan, IndexLogScan(records: records, validLength: at, damage: .corruptMiddle(offset: at), version: 1))
    }

    func testSecondHeader_orInvalidUTF8Payload_isABadRecord() {
        let invalidUTF8: [UInt8] = bytes("add 20261121T141003123Z-0000-9f3ab2c1-") + [0xFF] + bytes(" - pending.a0")
        for line in [IndexLogCodec.encodeHeader(), frame(len: "\(invalidUTF8.count)", crc: crcHex(invalidUTF8), payload: invalidUTF8)] {
            let (scan, at, records) = decodeWith(line: line, thenValidRecord: false)
            XCTAssertEqual(scan, IndexLogScan(records: records, validLength: at, damage: .corruptMiddle(offset: at), version: 1))
        }
    }

    // MARK: Header

    func testRecordsWithoutHeader_areCorruptAtZero() {
        let records = makeRecords(3)
        let b = records.flatMap { IndexLogCodec.encode($0) }
        XCTAssertEqual(IndexLogCodec.decode(b), IndexLogScan(records: [], validLength: 0, damage: .corruptMiddle(offset: 0), version: nil))
    }

    func testGarbledHeader_followedByRecords_isCorruptAtZero() {
        let records = makeRecords(3)
        for header in [bytes("R 14 00000000 spoold-index 1\n"), bytes("spoold-index 1\n"), bytes("\n"), bytes("R 14 ") ] {
            let b = header + records.flatMap { IndexLogCodec.encode($0) }
            XCTAssertEqual(IndexLogCodec.decode(b), IndexLogScan(records: [], validLength: 0, damage: .corruptMiddle(offset: 0), version: nil))
        }
    }

    func testPartialHeader_isTornFromZero() {
        let h = IndexLogCodec.encodeHeader()
        for cut in 1..<h.count {
            XCTAssertEqual(
                IndexLogCodec.decode(Array(h[..<cut])),
                IndexLogScan(records: [], validLength: 0, damage: .tornTail(offset: 0, length: cut), version: nil))
        }
    }

    func testOtherVersion_isReported_andNeverTruncated() {
        let records = makeRecords(3)
        for (payload, version) in [("spoold-index 2", 2 as Int?), ("spoold-index 17", 17), ("spoold-index 01", nil), ("spoold-index x", nil), ("spoold-index", nil)] {
            for withRecords in [false, true] {
                let b = IndexLogCodec.encode(payload: payload) + (withRecords ? records.flatMap { IndexLogCodec.encode($0) } : [])
                XCTAssertEqual(
                    IndexLogCodec.decode(b), IndexLogScan(records: [], validLength: 0, damage: .corruptMiddle(offset: 0), version: version),
                    payload)
            }
        }
    }

    // MARK: Fuzz

    /// Random mutations anywhere: never traps, and whatever is returned is a prefix of the truth
    /// ending at a record boundary.
    func testRandomMutations_returnAPrefixOfTheTruth() {
        let log = Log(makeRecords(30))
        var rng = SplitMix64(seed: 2024)
        for round in 0..<3000 {
            var b = log.bytes
            for _ in 0..<(1 + rng.below(4)) {
                switch rng.below(4) {
                case 0: b[rng.below(b.count)] = rng.nextByte()
                case 1: b.insert(rng.nextByte(), at: rng.below(b.count + 1))
                case 2: if !b.isEmpty { b.remove(at: rng.below(b.count)) }
                default: b.removeLast(rng.below(min(b.count, 200) + 1))
                }
            }
            let scan = IndexLogCodec.decode(b)
            XCTAssertEqual(scan.records, Array(log.records.prefix(scan.records.count)), "round \(round)")
            if scan.validLength > 0 {
                XCTAssertEqual(scan.validLength, log.bounds[scan.records.count], "round \(round)")
                XCTAssertEqual(Array(b[..<scan.validLength]), Array(log.bytes[..<scan.validLength]), "round \(round)")
            }
            switch scan.damage {
            case .none: XCTAssertEqual(scan.validLength, b.count, "round \(round)")
            case let .tornTail(offset, length):
                XCTAssertEqual(offset, scan.validLength)
                XCTAssertEqual(offset + length, b.count)
            case let .corruptMiddle(offset): XCTAssertEqual(offset, scan.validLength)
            }
        }
    }

    func testArbitraryBytes_neverTrap() {
        var rng = SplitMix64(seed: 99)
        let alphabet = bytes("R 0123456789abcdefABC\n\n\n \0x")
        for _ in 0..<5000 {
            let n = rng.below(200)
            let b = (0..<n).map { _ in rng.below(3) == 0 ? rng.nextByte() : alphabet[rng.below(alphabet.count)] }
            let scan = IndexLogCodec.decode(b)
            XCTAssertLessThanOrEqual(scan.validLength, b.count)
        }
    }

    // MARK: Performance (printed, not asserted)

    func testDecode20kRecords_correctness() {
        let records = makeRecords(20_000)
        let log = Log(records)
        let scan = IndexLogCodec.decode(log.bytes)
        XCTAssertEqual(scan, IndexLogScan(records: records, validLength: log.bytes.count, damage: .none, version: 1))
    }

    /// 2 MiB of garbage after the records, full of line starts that look like records: the scan
    /// for a later valid frame must stay linear.
    func testDecode_twoMebibyteHostileTail_isATornTail() {
        let log = Log(makeRecords(10))
        // Every line announces a 4096-byte payload but is 31 bytes long.
        let line = bytes("R 4096 deadbeef 0123456789abcd\n")
        var tail: [UInt8] = []
        tail.reserveCapacity(2 << 20)
        while tail.count < 2 << 20 { tail += line }
        // And lines whose length matches but whose checksum does not: the checksum is computed for each.
        var matching = bytes("R 40 00000000 ") + [UInt8](repeating: UInt8(ascii: "z"), count: 40) + [10]
        for _ in 0..<10_000 { tail += matching }
        matching.removeLast()
        tail += matching  // torn end
        let scan = IndexLogCodec.decode(log.bytes + tail)
        XCTAssertEqual(scan, IndexLogScan(records: log.records, validLength: log.bytes.count, damage: .tornTail(offset: log.bytes.count, length: tail.count), version: 1))
    }
}
