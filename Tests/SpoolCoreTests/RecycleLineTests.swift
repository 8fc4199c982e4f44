import SpoolCore
import XCTest

final class RecycleLineTests: XCTestCase {
    private func entry(_ ms: Int64, _ name: String, attempt: Int = 0) -> BacklogEntry {
        BacklogEntry(notBefore: Timestamp(millisecondsSinceEpoch: ms), id: ItemID("20261121T141003123Z-0000-9f3ab2c1-\(name)")!, attempt: attempt)
    }

    func testEncoded_parsesBackToTheSameLine() {
        let line = RecycleLine(queued: 1_000_000, entries: [entry(5, "a.jpg"), entry(5, "b.jpg", attempt: 2), entry(9, "a.jpg", attempt: 1)])
        XCTAssertEqual(RecycleLine(parsing: line.encoded), line)
        XCTAssertEqual(RecycleLine(parsing: RecycleLine(queued: 0, entries: []).encoded), RecycleLine(queued: 0, entries: []))
        let full = RecycleLine(queued: 7, entries: (0..<RecycleLine.maximumEntries).map { entry(Int64($0), "f\($0).dat") })
        XCTAssertLessThanOrEqual(full.encoded.count, RecycleLine.maximumBytes)
        XCTAssertEqual(RecycleLine(parsing: full.encoded), full)
    }

    func testFigures_travelWithTheLine_agesAndAll() {
        var ages = CreationMinutes()
        for ms: Int64 in [1_000, 61_000, 61_500, 7_200_000_000] { ages.add(Timestamp(millisecondsSinceEpoch: ms)) }
        ages.fold(now: Timestamp(millisecondsSinceEpoch: 7_200_000_000))  // the first three fold into one count
        let figures = RecycleLine.Figures(usage: QueueUsage(items: 4, payloadBytes: 64, diskBytes: 32_768), isEstimated: true, ages: ages)
        let line = RecycleLine(queued: 4, entries: [entry(5, "a.jpg")], figures: figures)
        let parsed = RecycleLine(parsing: line.encoded)
        XCTAssertEqual(parsed, line)
        XCTAssertEqual(parsed?.figures?.ages.total, 4)
        XCTAssertEqual(parsed?.figures?.ages.shape(now: Timestamp(millisecondsSinceEpoch: 7_200_060_000)),
                       ages.shape(now: Timestamp(millisecondsSinceEpoch: 7_200_060_000)))
        let text = String(decoding: line.encoded, as: UTF8.self)
        for bad in ["figures 4 64 32768 2", "figures 4 -64 32768 1", "figures 4 64 1"] {
            XCTAssertNil(RecycleLine(parsing: Array(text.replacingOccurrences(of: "figures 4 64 32768 1", with: bad).utf8)), bad)
        }
        XCTAssertNil(RecycleLine(parsing: Array(text.replacingOccurrences(of: "minute", with: "minutes").utf8)))
        XCTAssertNil(RecycleLine(parsing: Array(text.replacingOccurrences(of: "older", with: "old").utf8)))
    }

    func testParsing_refusesAnythingButAWholeLineInOrder() {
        let good = RecycleLine(queued: 3, entries: [entry(5, "a.jpg"), entry(6, "b.jpg")]).encoded
        XCTAssertNotNil(RecycleLine(parsing: good))
        XCTAssertNil(RecycleLine(parsing: []))
        XCTAssertNil(RecycleLine(parsing: Array(good.dropLast())), "cut before its last newline")
        XCTAssertNil(RecycleLine(parsing: Array("spoold-line 2 3\n".utf8)), "another version")
        XCTAssertNil(RecycleLine(parsing: Array("spoold-line 1 -3\n".utf8)))
        XCTAssertNil(RecycleLine(parsing: good + Array("junk\n".utf8)))
        XCTAssertNil(RecycleLine(parsing: good + Array("\n".utf8)), "an empty line")
        XCTAssertNil(RecycleLine(parsing: Array("spoold-line 1 3\n6 0 20261121T141003123Z-0000-9f3ab2c1-b.jpg\n5 0 20261121T141003123Z-0000-9f3ab2c1-a.jpg\n".utf8)), "out of line order")
        XCTAssertNil(RecycleLine(parsing: Array("spoold-line 1 3\n5 0 ../../etc/passwd\n".utf8)), "not an item id")
        XCTAssertNil(RecycleLine(parsing: Array("spoold-line 1 3\n5 100000 20261121T141003123Z-0000-9f3ab2c1-a.jpg\n".utf8)), "no such attempt")
        let tooMany = RecycleLine(queued: 7, entries: (0..<RecycleLine.maximumEntries).map { entry(Int64($0), "f\($0).dat") }).encoded
            + Array("99999 0 20261121T141003123Z-0000-9f3ab2c1-z.dat\n".utf8)
        XCTAssertNil(RecycleLine(parsing: tooMany))
    }

    func testHandoff_carriesTheLinesDescriptor() {
        var handoff = RecycleHandoff(lockDescriptor: 7, generation: 3, startedAt: Timestamp(millisecondsSinceEpoch: 1))
        XCTAssertNil(RecycleHandoff(parsing: handoff.encoded)?.lineDescriptor)
        handoff.lineDescriptor = 9
        XCTAssertEqual(RecycleHandoff(parsing: handoff.encoded), handoff)
        XCTAssertNil(RecycleHandoff(parsing: handoff.encoded.replacingOccurrences(of: "line=9", with: "line=99999999999")))
    }
}
