import Foundation
import Glibc
import SpoolCore
@testable import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import Synchronization
import XCTest

/// A queue far larger than the engine's memory (`--queue-memory`), under the manual clock: items
/// go out in line order across all of it (untried by the time in their id, tried ones at their
/// next-attempt time), while memory never holds more than its bound.
final class BacklogOrderTests: EngineTestCase {
    /// Records the most items the engine held in memory at any step.
    private final class MemoryWatch: EngineObserver {
        var most = 0
        func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp? {
            most = max(most, engine.items.count)
            return nil
        }
    }

    /// Writes a file with plain calls (FileManager's atomic write fsyncs each one).
    private func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }, bytes.count)
    }

    /// Writes an item's two files straight into pending/ (no sync: a test's spool).
    private func writeItem(_ metadata: ItemMetadata, attempt: Int, mtime: Timestamp? = nil) throws {
        let id = try XCTUnwrap(ItemID(metadata.id))
        let json = temp.path(.pending, ItemFileName(id: id, attempt: attempt, kind: .json).description)
        let blob = temp.path(.pending, ItemFileName(id: id, attempt: attempt, kind: .blob).description)
        try write([7], to: blob)
        try write(MetadataCodec.encode(metadata), to: json)
        if let mtime {
            let t = timespec(tv_sec: Int(mtime.millisecondsSinceEpoch / 1000), tv_nsec: Int(mtime.millisecondsSinceEpoch % 1000) * 1_000_000)
            var times = [t, t]
            XCTAssertEqual(utimensat(AT_FDCWD, json, &times, 0), 0)
        }
    }

    /// Writes `count` items into pending/, made one millisecond apart and ending a minute ago,
    /// every one for which `triedDue` gives a time tried once and due again then; returns them
    /// in line order.
    private func writeQueue(_ count: Int, triedDue: (Int, ItemID) -> Timestamp?) throws -> [BacklogEntry] {
        var maker = TestItems(startingAt: clock.now().millisecondsSinceEpoch - Int64(count) - 60_000)
        var expected: [BacklogEntry] = []
        for n in 0..<count {
            var metadata = maker.metadata("f\(n).dat")
            metadata.size = 1
            let id = try XCTUnwrap(ItemID(metadata.id))
            if let due = triedDue(n, id) {
                try writeItem(metadata, attempt: 1, mtime: due)
                expected.append(BacklogEntry(notBefore: due, id: id, attempt: 1))
            } else {
                try writeItem(metadata, attempt: 0)
                expected.append(BacklogEntry.untried(id))
            }
        }
        return expected.sorted()
    }

    /// `count` items in pending/, some tried once and due again a little later among the untried
    /// ones (returned in line order), and an engine's configuration whose memory (200) makes a
    /// start's head 50 items (a quarter of memory, at most a load).
    private func queueWithAHeadOf50(_ count: Int) throws -> ([BacklogEntry], EngineConfiguration) {
        let expected = try writeQueue(count) { n, id in
            n % 101 == 7 ? Timestamp(millisecondsSinceEpoch: id.createdAt!.millisecondsSinceEpoch + 40) : nil
        }
        var configuration = configuration(settle: 0, concurrency: 4, direct: false)
        configuration.queueMemory = 200
        return (expected, configuration)
    }

    func testAQueueOf6000_withMemoryFor60_goesOutOldestFirst_retriesAtTheirTime_andMemoryStaysBounded() throws {
        let count = 6_000
        let memory = 60
        let now = clock.now()
        // Some tried once and due again at a time of their own: some in the past, among the
        // untried ones; some still to come.
        let expected = try writeQueue(count) { n, _ in n % 97 == 5 ? now.adding(seconds: Double(n % 3 == 0 ? -30 : n % 7)) : nil }

        var configuration = configuration(settle: 0, concurrency: 8, direct: false)
        configuration.queueMemory = memory
        fs.skipsSyncs = true  // order and memory are the subject here, not durability
        let watch = MemoryWatch()
        let embedded = try start(configuration, observers: [watch])
        embedded.transport.autoAnswer = .status(201)
        while embedded.transport.inFlight > 0 { try embedded.transport.answerNext(.status(201)) }  // started before
        var seconds = 0
        while embedded.transport.started.count < count, seconds < 120 {
            try embedded.advanceTime(by: 1)
            seconds += 1
        }
        let sent = embedded.transport.started.map(\.request.id)
        XCTAssertEqual(sent.count, count)
        XCTAssertEqual(Set(sent).count, count, "each item once")
        if sent != expected.map(\.id) {
            let first = zip(sent, expected.map(\.id)).enumerated().first { $0.element.0 != $0.element.1 }
            XCTFail("out of line order at request \(first?.offset ?? -1): \(String(describing: first?.element))")
        }
        XCTAssertLessThanOrEqual(watch.most, memory, "memory held at most --queue-memory items")
        XCTAssertGreaterThanOrEqual(embedded.engine.passCount, 1, "what lay beyond memory was read by a pass")
        XCTAssertEqual(temp.names(in: .pending).count, 0, "every item uploaded")
        XCTAssertTrue(temp.names(in: .tmp).filter { $0.hasPrefix("backlog.") }.isEmpty, "runs removed once used up")
    }

    /// A start lists pending/ once for the first items in line and sends them, while the runs of
    /// the rest are still to be written on the pass's thread (held here): the first upload of a
    /// large backlog does not wait for a sort of all of it, and the line order holds across.
    func testAtStart_theFirstItemsInLineGoOut_whileTheRunsOfTheRestAreStillToBeWritten() throws {
        let count = 3_000
        let (expected, configuration) = try queueWithAHeadOf50(count)
        fs.skipsSyncs = true  // order is the subject here, not durability
        let held = Mutex<[@Sendable () -> Void]>([])
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration, clock: clock,
            runPass: { work in held.withLock { $0.append(work) } })

        let started = embedded.transport.started.map(\.request.id)
        XCTAssertEqual(started, expected.prefix(4).map(\.id), "the first in line go out at start")
        XCTAssertFalse(held.withLock(\.isEmpty), "the runs of the rest are still to be written")
        XCTAssertEqual(temp.names(in: .tmp).filter { $0.hasPrefix("backlog.") }, [], "no run written yet")
        XCTAssertEqual(embedded.engine.pendingCount + embedded.engine.uploads.count, count, "the whole queue counted from the start")

        // The head goes out, up to its last entry (the pass may find what comes right after it).
        embedded.transport.autoAnswer = .status(201)
        while embedded.transport.inFlight > 0 { try embedded.transport.answerNext(.status(201)) }
        for _ in 0..<5 { try embedded.advanceTime(by: 1) }
        XCTAssertEqual(embedded.transport.started.map(\.request.id), expected.prefix(49).map(\.id), "the head, in line order")

        // The runs are written; the rest follows, in line order across the two.
        for _ in 0..<10 {
            for work in held.withLock({ list in defer { list.removeAll() }; return list }) { work() }
            try embedded.advanceTime(by: 1)
        }
        let sent = embedded.transport.started.map(\.request.id)
        XCTAssertEqual(sent.count, count)
        if sent != expected.map(\.id) {
            let first = zip(sent, expected.map(\.id)).enumerated().first { $0.element.0 != $0.element.1 }
            XCTFail("out of line order at request \(first?.offset ?? -1): \(String(describing: first?.element))")
        }
        XCTAssertEqual(temp.names(in: .pending).count, 0, "every item uploaded")
    }

    /// The head a start reads before the runs exist is what the waiting list holds, a quarter of
    /// `--queue-memory` (here 2,000 of 8,000), not one batch of 1,024: at a million queued a
    /// recycled image sent 1,024 in 0.6 s, then waited for its pass.
    func testAtStart_theHeadIsAQuarterOfQueueMemory_notOneBatch() throws {
        let count = 3_000
        let expected = try writeQueue(count) { _, _ in nil }
        var configuration = configuration(settle: 0, concurrency: 4, direct: false)
        configuration.queueMemory = 8_000
        fs.skipsSyncs = true  // order is the subject here, not durability
        let held = Mutex<[@Sendable () -> Void]>([])
        let embedded = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration, clock: clock,
            runPass: { work in held.withLock { $0.append(work) } })
        embedded.transport.autoAnswer = .status(201)
        while embedded.transport.inFlight > 0 { try embedded.transport.answerNext(.status(201)) }
        for _ in 0..<5 { try embedded.advanceTime(by: 1) }

        XCTAssertFalse(held.withLock(\.isEmpty), "the runs of the rest are still to be written")
        let sent = embedded.transport.started.map(\.request.id)
        XCTAssertEqual(sent.count, 1_999, "the head, up to its last entry, before the pass is done")
        XCTAssertTrue(sent == expected.prefix(1_999).map(\.id), "in line order")
    }

    /// A first image on a queue of 2,000 (memory for 200, so a head of 50) that recycles after 300
    /// requests: the queue in line, the configuration (recycling off, for a next image), what the
    /// first image sent, and the line it handed on.
    private func firstImageUntilRecycle() throws -> (expected: [BacklogEntry], configuration: EngineConfiguration, sent: [ItemID], line: RecycleLine) {
        let (expected, headOf50) = try queueWithAHeadOf50(2_000)
        var configuration = headOf50
        configuration.recycle = RecycleTrigger(maximumRequests: 300, growthLimitKiB: 0, checkEveryRequests: 1)
        fs.skipsSyncs = true  // order is the subject here, not durability
        let first = try EmbeddedEngine(spool: temp.open(fs: fs), configuration: configuration, clock: clock)
        first.transport.autoAnswer = .status(201)
        while first.transport.inFlight > 0 { try first.transport.answerNext(.status(201)) }
        var seconds = 0
        while first.summary == nil, seconds < 60 {
            try first.advanceTime(by: 1)
            seconds += 1
        }
        XCTAssertEqual(first.summary?.stop, .recycle)
        let sent = first.transport.started.map(\.request.id)
        XCTAssertEqual(sent, expected.prefix(sent.count).map(\.id), "the first image, in line")
        configuration.recycle = RecycleTrigger(maximumRequests: 0, growthLimitKiB: 0)
        return (expected, configuration, sent, try XCTUnwrap(first.engine.lineForNextImage))
    }

    /// An item made before all of a queue of `count`, put into pending/ by hand.
    private func writeAnItemOlderThanAll(_ count: Int) throws -> ItemID {
        var maker = TestItems(startingAt: clock.now().millisecondsSinceEpoch - Int64(count) - 600_000)
        var early = maker.metadata("early.dat")
        early.size = 1
        try writeItem(early, attempt: 0)
        return ItemID(early.id)!
    }

    /// The next image, handed `line`; its passes are held (run by the test, or never).
    private func nextImage(_ configuration: EngineConfiguration, _ line: RecycleLine) throws -> (EmbeddedEngine, PassWork) {
        let passes = PassWork()
        let next = try EmbeddedEngine(
            spool: temp.open(fs: fs), configuration: configuration, clock: clock,
            runPass: { work in passes.held.withLock { $0.append(work) } }, line: line)
        return (next, passes)
    }

    /// A recycle hands the next image the first items in line (`Engine.lineForNextImage`): the
    /// new image sends them without listing pending/ first, skips an entry that no longer names
    /// a json there, and its pass finds everything else (an item put there by hand in the
    /// instant of the exec, an item moved on an attempt) and sends it, the rest in line.
    func testARecycledImage_sendsTheLineItWasHanded_beforeItsPassHasReadPending_thenTheRestInLine() throws {
        let count = 2_000
        let (expected, configuration, sent, whole) = try firstImageUntilRecycle()
        // A line that is not whole, as a recycle in the middle of a pass hands on: its first 50.
        for run in whole.runs?.runs ?? [] { close(run.descriptor) }
        let line = RecycleLine(queued: whole.queued, entries: Array(whole.entries.prefix(50)))
        let left = Array(expected.dropFirst(sent.count))
        XCTAssertEqual(line.entries, Array(left.prefix(50)), "the next 50 in line")
        XCTAssertEqual(line.queued, left.count)

        // Between the images: one handed item is purged, another moved on to its next attempt
        // (same place in line), and an item older than all is put into pending/ by hand.
        let (gone, moved) = (line.entries[10], line.entries[20])
        for kind in [ItemFileName.Kind.json, .blob] {
            XCTAssertEqual(unlink(temp.path(.pending, ItemFileName(id: gone.id, attempt: gone.attempt, kind: kind).description)), 0)
            XCTAssertEqual(rename(
                temp.path(.pending, ItemFileName(id: moved.id, attempt: moved.attempt, kind: kind).description),
                temp.path(.pending, ItemFileName(id: moved.id, attempt: moved.attempt + 1, kind: kind).description)), 0)
        }
        let t = timespec(tv_sec: Int(moved.notBefore.millisecondsSinceEpoch / 1000), tv_nsec: Int(moved.notBefore.millisecondsSinceEpoch % 1000) * 1_000_000)
        var times = [t, t]
        XCTAssertEqual(utimensat(AT_FDCWD, temp.path(.pending, ItemFileName(id: moved.id, attempt: moved.attempt + 1, kind: .json).description), &times, 0), 0)
        let early = try writeAnItemOlderThanAll(count)

        let (next, passes) = try nextImage(configuration, line)
        let head = line.entries.filter { $0 != gone && $0 != moved }
        // A listing of pending/ would have found the early item first.
        XCTAssertEqual(next.transport.started.map(\.request.id), head.prefix(4).map(\.id), "the handed line goes out at once")
        XCTAssertFalse(passes.held.withLock(\.isEmpty), "the pass is still to read pending/")
        XCTAssertEqual(next.engine.pendingCount + next.engine.uploads.count, left.count, "the last image's count until the pass")
        next.transport.autoAnswer = .status(201)
        while next.transport.inFlight > 0 { try next.transport.answerNext(.status(201)) }
        for _ in 0..<5 { try next.advanceTime(by: 1) }
        XCTAssertEqual(next.transport.started.map(\.request.id), head.dropLast().map(\.id), "the line up to its last entry")

        for _ in 0..<10 {
            passes.runAll()
            try next.advanceTime(by: 1)
        }
        let rest = [early, moved.id] + left.dropFirst(49).filter { $0 != gone && $0 != moved }.map(\.id)
        XCTAssertEqual(next.transport.started.map(\.request.id), head.dropLast().map(\.id) + rest, "what the pass found, then the rest in line")
        XCTAssertEqual(temp.names(in: .pending).count, 0, "every item uploaded")
    }

    /// A recycle with no pass under way hands the whole line on (`RecycleLine.runs`): the items
    /// in memory and waiting by entry, and the runs of the last pass, open, with where the image
    /// was reading them. The next image lists nothing: it sends the rest of the line in order,
    /// skipping items gone meanwhile, and starts no pass over pending/. An item put into
    /// pending/ by hand in the instant of the exec is found here by the rescan once nothing waits
    /// on disk: the daemon adopts it sooner, from the inotify instance a real recycle hands on
    /// (`BacklogAtSizeTests`), which a scripted event source does not have.
    func testARecycledImage_takesTheWholeLine_andReadsOnTheRuns_withoutAPassOverPending() throws {
        let count = 2_000
        let (expected, configuration, sent, line) = try firstImageUntilRecycle()
        let left = Array(expected.dropFirst(sent.count))
        let runs = try XCTUnwrap(line.runs, "no pass under way: the whole line")
        XCTAssertFalse(runs.runs.isEmpty)
        XCTAssertEqual(line.queued, left.count)
        XCTAssertEqual(line.entries, Array(left.prefix(line.entries.count)), "memory and the waiting list come first in line")
        XCTAssertEqual(line.entries.count + runs.left, left.count, "the rest is in the runs")
        XCTAssertEqual(temp.names(in: .tmp).filter { $0.hasPrefix("backlog.") }, [], "the runs' files are gone from tmp/, kept open")

        // Between the images: an item in memory and one in the runs are purged; an item older
        // than all is put into pending/ by hand.
        let gone = [line.entries[10], left[line.entries.count + 10]]
        for entry in gone {
            for kind in [ItemFileName.Kind.json, .blob] {
                XCTAssertEqual(unlink(temp.path(.pending, ItemFileName(id: entry.id, attempt: entry.attempt, kind: kind).description)), 0)
            }
        }
        let early = try writeAnItemOlderThanAll(count)

        let (next, passes) = try nextImage(configuration, line)
        XCTAssertEqual(next.engine.pendingCount + next.engine.uploads.count, left.count - 1, "counted from the line, the purged one in memory left out")
        next.transport.autoAnswer = .status(201)
        while next.transport.inFlight > 0 { try next.transport.answerNext(.status(201)) }
        var seconds = 0
        while next.transport.started.count < left.count - 2, seconds < 60 {
            try next.advanceTime(by: 1)
            seconds += 1
        }
        XCTAssertTrue(passes.held.withLock(\.isEmpty), "no pass over pending/")
        XCTAssertEqual(next.transport.started.map(\.request.id), left.filter { !gone.contains($0) }.map(\.id), "the rest of the line, in line")
        try next.advanceTime(by: 61)
        XCTAssertEqual(next.transport.started.last?.request.id, early, "found by the rescan once nothing waits on disk")
        XCTAssertEqual(temp.names(in: .pending).count, 0, "every item uploaded")
    }

    /// A recycle winding down (its uploads in flight let finish) still adopts an item moved into
    /// pending/, and hands it on first in its line: the next image lists nothing that would
    /// find it otherwise.
    func testARecycleWindingDown_stillAdoptsAnItemPutIntoPending_andHandsItOnInItsLine() throws {
        var maker = TestItems(startingAt: clock.now().millisecondsSinceEpoch - 100_000)
        for n in 0..<300 {
            var metadata = maker.metadata("b\(n).dat")
            metadata.size = 1
            try writeItem(metadata, attempt: 0)
        }
        var configuration = configuration(settle: 0, concurrency: 2, direct: false)
        configuration.queueMemory = 20
        configuration.recycle = RecycleTrigger(maximumRequests: 2, growthLimitKiB: 0, checkEveryRequests: 1)
        fs.skipsSyncs = true
        let embedded = try start(configuration)
        XCTAssertEqual(embedded.transport.inFlight, 2)
        try embedded.advanceTime(by: 1)
        XCTAssertNil(embedded.summary, "winding down: its two uploads are still in flight")

        var oldMaker = TestItems(startingAt: clock.now().millisecondsSinceEpoch - 500_000)
        var old = oldMaker.metadata("old.dat")
        old.size = 1
        try writeItem(old, attempt: 0)
        embedded.events.feed(InotifyWatcher.movedTo, name: "\(old.id).a0.json", in: "pending")
        try embedded.advanceTime(by: 0)
        while embedded.transport.inFlight > 0 { try embedded.transport.answerNext(.status(201)) }
        try embedded.advanceTime(by: 1)

        XCTAssertEqual(embedded.summary?.stop, .recycle)
        XCTAssertEqual(embedded.transport.started.count, 2, "no new work while winding down")
        let line = try XCTUnwrap(embedded.engine.lineForNextImage)
        XCTAssertNotNil(line.runs, "the whole line")
        XCTAssertEqual(line.entries.first?.id, ItemID(old.id), "adopted, and first in line")
        for run in line.runs?.runs ?? [] { close(run.descriptor) }
    }

    func testWhileABacklogWaits_newFilesGoAfterIt_andAnOlderItemAnOperatorPutBackGoesFirst() throws {
        let count = 300
        let now = clock.now()
        var maker = TestItems(startingAt: now.millisecondsSinceEpoch - 100_000)
        var backlog: [ItemID] = []
        for n in 0..<count {
            var metadata = maker.metadata("b\(n).dat")
            metadata.size = 1
            try writeItem(metadata, attempt: 0)
            backlog.append(ItemID(metadata.id)!)
        }
        var configuration = configuration(settle: 0, concurrency: 2, direct: false)
        configuration.queueMemory = 20
        fs.skipsSyncs = true
        let embedded = try start(configuration)
        XCTAssertEqual(embedded.transport.started.map(\.request.id), Array(backlog.prefix(2)))

        // New files arrive: they are newer than everything waiting, so they go after it all.
        for name in ["new1.txt", "new2.txt"] {
            try temp.write(Array(name.utf8), to: name, in: .incoming)
            embedded.events.feed(InotifyWatcher.closeWrite, name: name)
        }
        try embedded.advanceTime(by: 0)
        // An operator puts back an item older than all of them (`spoold retry`, or `mv`).
        var oldMaker = TestItems(startingAt: now.millisecondsSinceEpoch - 500_000)
        var old = oldMaker.metadata("old.dat")
        old.size = 1
        try writeItem(old, attempt: 0)
        embedded.events.feed(InotifyWatcher.movedTo, name: "\(old.id).a0.json", in: "pending")
        try embedded.advanceTime(by: 0)

        embedded.transport.autoAnswer = .status(201)
        while embedded.transport.inFlight > 0 { try embedded.transport.answerNext(.status(201)) }
        for _ in 0..<60 where embedded.transport.started.count < count + 3 { try embedded.advanceTime(by: 1) }

        let sent = embedded.transport.started.map(\.request.id)
        XCTAssertEqual(sent.count, count + 3)
        XCTAssertEqual(sent[2], ItemID(old.id), "the oldest goes next, ahead of the backlog")
        XCTAssertEqual(Array(sent[3..<(count + 1)]), Array(backlog.dropFirst(2)), "then the backlog, in order")
        XCTAssertEqual(Set(sent.suffix(2).map { String($0.rawValue.split(separator: "-").last!) }), ["new1.txt", "new2.txt"],
                       "the new files last")
    }

    /// pending/ is watched for renames only: every way into it is one. A close-write watch on it
    /// makes the kernel walk every name of pending/ it holds in memory as the watch is set, 0.19 s
    /// before the first request at a million queued (docs/performance.md "A backlog").
    func testPendingIsWatchedForRenamesOnly_incomingForWritesAsTheyClose() throws {
        let embedded = try start(configuration(settle: 0))
        XCTAssertEqual(embedded.events.mask(of: "pending"), InotifyWatcher.movedTo)
        XCTAssertNotEqual((embedded.events.mask(of: "incoming") ?? 0) & InotifyWatcher.closeWrite, 0)
    }

    func testALoneBlobAnOperatorLeftInPending_isRepairedAtStart_andUploaded() throws {
        var maker = TestItems(startingAt: clock.now().millisecondsSinceEpoch - 10_000)
        var kept = maker.metadata("kept.dat")
        kept.size = 1
        try writeItem(kept, attempt: 0)
        let lone = maker.id("lone.dat")  // its json is gone; nothing in the index names it
        try write([1, 2], to: temp.path(.pending, ItemFileName(id: lone, attempt: 0, kind: .blob).description))

        let embedded = try start(configuration(settle: 0, concurrency: 2, direct: false))
        XCTAssertEqual(Set(embedded.transport.started.map(\.request.id)), [ItemID(kept.id)!, lone],
                       "the lone blob got its json back and went with the other")
    }
}
