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

    func testAWholeLine_carriesItsRunsAndWhatWasKnownOnlyByCount() {
        let figures = RecycleLine.Figures(usage: QueueUsage(items: 9, payloadBytes: 64, diskBytes: 32_768), isEstimated: false, ages: CreationMinutes())
        let runs = RecycleLine.Runs(
            runs: [.init(descriptor: 12, offset: 0), .init(descriptor: 14, offset: 1_048_576)], left: 900_000, uncounted: 3,
            earliestUncounted: entry(-4, "c.jpg", attempt: 1))
        let whole = RecycleLine(queued: 1_000_000, entries: [entry(5, "a.jpg"), entry(6, "b.jpg")], figures: figures, runs: runs)
        XCTAssertEqual(RecycleLine(parsing: whole.encoded), whole)
        let noRuns = RecycleLine(queued: 2, entries: [entry(5, "a.jpg")], runs: .init(runs: [], left: 0))
        XCTAssertEqual(RecycleLine(parsing: noRuns.encoded), noRuns, "a whole line with everything in memory")
        XCTAssertNil(RecycleLine(parsing: noRuns.encoded).flatMap { $0.runs?.earliestUncounted })

        let text = String(decoding: whole.encoded, as: UTF8.self)
        for (from, to) in [
            ("run 14 1048576", "run 12 1048576"), ("run 14 1048576", "run -1 0"), ("run 14 1048576", "run 14 -5"),
            ("run 14 1048576", "run 14"), ("runs 900000 3", "runs 900000"), ("runs 900000 3", "runs -1 3"),
            ("earliest -4 1 ", "earliest x 1 "), ("earliest -4 1 20261121T141003123Z-0000-9f3ab2c1-c.jpg\n", ""),
        ] {
            XCTAssertNil(RecycleLine(parsing: Array(text.replacingOccurrences(of: from, with: to).utf8)), "\(from) -> \(to)")
        }
        let tooManyRuns = RecycleLine(
            queued: 1, entries: [], runs: .init(runs: (0..<Int32(RecycleLine.maximumRuns)).map { .init(descriptor: $0, offset: 0) }, left: 1))
        XCTAssertLessThanOrEqual(tooManyRuns.encoded.count, RecycleLine.maximumBytes)
        XCTAssertNotNil(RecycleLine(parsing: tooManyRuns.encoded))
        let oneMore = String(decoding: tooManyRuns.encoded, as: UTF8.self).replacingOccurrences(of: "runs 1 0\n", with: "runs 1 0\nrun 99999 0\n")
        XCTAssertNil(RecycleLine(parsing: Array(oneMore.utf8)))
    }

    func testHandoff_carriesTheLinesDescriptor() {
        var handoff = RecycleHandoff(lockDescriptor: 7, generation: 3, startedAt: Timestamp(millisecondsSinceEpoch: 1))
        XCTAssertNil(RecycleHandoff(parsing: handoff.encoded)?.lineDescriptor)
        handoff.lineDescriptor = 9
        XCTAssertEqual(RecycleHandoff(parsing: handoff.encoded), handoff)
        XCTAssertNil(RecycleHandoff(parsing: handoff.encoded.replacingOccurrences(of: "line=9", with: "line=99999999999")))
        handoff.watchDescriptor = 11
        XCTAssertEqual(RecycleHandoff(parsing: handoff.encoded), handoff, "the inotify instance's descriptor")
        XCTAssertNil(RecycleHandoff(parsing: handoff.encoded.replacingOccurrences(of: "watch=11", with: "watch=-1")))
    }
}
