import SpoolCore
import XCTest

/// The in-memory window of a large queue: what is claimed, read in, given back, and when a pass
/// over pending/ is needed, so that items go out in line order at a bounded memory.
final class BacklogTests: XCTestCase {
    private func entry(_ ms: Int64, _ n: Int = 0, attempt: Int = 0) -> BacklogEntry {
        BacklogEntry(
            notBefore: Timestamp(millisecondsSinceEpoch: ms),
            id: ItemID("20261121T141003123Z-\(String(n + 10000).dropFirst())-9f3ab2c1-x")!, attempt: attempt)
    }

    func testNothingOnDisk_theHeadIsClaimed_andAnArrivalIsKeptWhileThereIsRoom() {
        var backlog = Backlog(capacity: 2)
        XCTAssertEqual(backlog.next(head: entry(5), inMemory: 1), .claim)
        XCTAssertTrue(backlog.mayClaim(entry(5)))
        XCTAssertEqual(backlog.next(head: nil, inMemory: 0), .idle)
        XCTAssertTrue(backlog.admit(entry(6), inMemory: 1))
        XCTAssertFalse(backlog.admit(entry(7), inMemory: 2), "memory is full: it waits on disk")
        XCTAssertEqual(backlog.waitingEntries, [entry(7)])
        XCTAssertFalse(backlog.admit(entry(8), inMemory: 1), "an earlier item waits on disk: a later one may not pass it")
    }

    func testAnEarlierItemInTheRuns_isReadInBeforeTheHeadIsClaimed_andMemoryGivesBackItsLatestWhenFull() {
        var backlog = Backlog(capacity: 4, batch: 3)
        backlog.nextRun = entry(1)
        XCTAssertEqual(backlog.next(head: entry(5), inMemory: 2), .load(2))
        XCTAssertEqual(backlog.next(head: entry(5), inMemory: 0), .load(3), "a batch at most")
        XCTAssertEqual(backlog.next(head: entry(5), inMemory: 4), .evict(1))
        XCTAssertFalse(backlog.mayClaim(entry(5)), "1 waits on disk")
        backlog.nextRun = entry(9)
        XCTAssertEqual(backlog.next(head: entry(5), inMemory: 4), .claim)
        XCTAssertEqual(backlog.next(head: entry(5), inMemory: 3), .load(1), "memory is kept full of what comes next")
    }

    func testWaitingEntries_areReadInInLineWithTheRuns() {
        var backlog = Backlog(capacity: 8)
        backlog.nextRun = entry(10)
        XCTAssertFalse(backlog.admit(entry(20), inMemory: 8))
        XCTAssertFalse(backlog.admit(entry(3), inMemory: 8))
        XCTAssertEqual(backlog.nextToLoad, entry(3))
        XCTAssertEqual(backlog.takeWaiting(), entry(3))
        XCTAssertEqual(backlog.nextToLoad, entry(10), "then the runs' next")
    }

    func testPastTheWaitingLimit_onlyAPassCanFindThem_andNothingBehindThemIsClaimedMeanwhile() {
        var backlog = Backlog(capacity: 4)  // waiting limit 1
        XCTAssertFalse(backlog.admit(entry(50), inMemory: 4))
        XCTAssertFalse(backlog.admit(entry(40), inMemory: 4), "counted only")
        XCTAssertEqual(backlog.uncounted, 1)
        XCTAssertEqual(backlog.next(head: entry(45), inMemory: 4), .waitForPass, "40 is somewhere on disk, before the head")
        XCTAssertTrue(backlog.wantsPass(head: entry(45), inMemory: 4))
        XCTAssertEqual(backlog.next(head: entry(30), inMemory: 4), .claim, "30 is before anything on disk")

        backlog.passStarted()
        XCTAssertFalse(backlog.wantsPass(head: entry(45), inMemory: 0))
        XCTAssertEqual(backlog.next(head: entry(45), inMemory: 4), .waitForPass, "still before the pass's floor")
        backlog.passFinished(nextRun: entry(40))
        XCTAssertEqual(backlog.next(head: entry(45), inMemory: 3), .load(1))
    }

    func testAtStart_nothingIsClaimedBeforeTheFirstPass() {
        var backlog = Backlog(capacity: 10)
        backlog.unknownOnDisk()
        XCTAssertEqual(backlog.next(head: entry(1), inMemory: 1), .waitForPass)
        XCTAssertTrue(backlog.wantsPass(head: entry(1), inMemory: 1))
        backlog.passStarted()
        backlog.passFinished(nextRun: nil)
        XCTAssertTrue(backlog.isEmpty)
        XCTAssertEqual(backlog.next(head: entry(1), inMemory: 1), .claim)
    }

    func testAHeadFoundByThePass_isReadInAndClaimedAtOnce_butNothingBehindItsLastBeforeThePassEnds() {
        var backlog = Backlog(capacity: 12)  // waiting limit 3
        backlog.unknownOnDisk()
        backlog.passStarted()
        XCTAssertEqual(backlog.next(head: nil, inMemory: 0), .waitForPass, "before the head: anything may be first")
        XCTAssertEqual(backlog.passFoundHead([entry(1), entry(2), entry(3), entry(4)]), 3, "as many as the waiting list holds")
        XCTAssertEqual(backlog.waitingEntries, [entry(1), entry(2), entry(3)])
        XCTAssertEqual(backlog.next(head: nil, inMemory: 0), .load(12))
        for expected in [entry(1), entry(2), entry(3)] { XCTAssertEqual(backlog.takeWaiting(), expected) }
        XCTAssertTrue(backlog.mayClaim(entry(1)))
        XCTAssertTrue(backlog.mayClaim(entry(2)))
        XCTAssertFalse(backlog.mayClaim(entry(3)), "the last taken is the floor: the pass may find what comes right after it")
        XCTAssertFalse(backlog.mayClaim(entry(9)), "an item in memory behind the head waits for the pass")
        XCTAssertFalse(backlog.wantsPass(head: entry(9), inMemory: 3), "one is under way")
        backlog.passFinished(nextRun: entry(4))
        XCTAssertTrue(backlog.mayClaim(entry(3)))
        XCTAssertFalse(backlog.mayClaim(entry(9)), "4, from the runs, first")
        XCTAssertEqual(backlog.passFoundHead([entry(5)]), 0, "no pass under way: nothing to take")
    }

    func testRunsUsedUp_withItemsOnlyAPassCanFind_aPassStartsOnceMemoryRunsLow() {
        var backlog = Backlog(capacity: 4)
        XCTAssertFalse(backlog.admit(entry(50), inMemory: 4))
        XCTAssertFalse(backlog.admit(entry(60), inMemory: 4))
        XCTAssertFalse(backlog.wantsPass(head: entry(10), inMemory: 2), "50 can be read in without one")
        XCTAssertEqual(backlog.takeWaiting(), entry(50))
        XCTAssertFalse(backlog.wantsPass(head: entry(10), inMemory: 3), "memory is still well fed")
        XCTAssertTrue(backlog.wantsPass(head: entry(10), inMemory: 2))
    }

    /// A recycled image that took its last image's whole line knows pending/ as that image did:
    /// nothing unknown since the start (`unknownOnDisk`) holds claims back, the runs read on,
    /// and what was known only by count still waits for a pass, which nothing behind its
    /// earliest passes.
    func testAWholeLineHandedOn_replacesWhatTheStartDidNotKnow_andKeepsWhatWaitedForAPass() {
        var backlog = Backlog(capacity: 4)
        backlog.unknownOnDisk()
        XCTAssertFalse(backlog.mayClaim(entry(1)), "at start, before anything is known")
        backlog.tookHandedLine(nextRun: entry(10), uncounted: 0, earliestUncounted: nil)
        XCTAssertTrue(backlog.mayClaim(entry(5)))
        XCTAssertEqual(backlog.nextToLoad, entry(10))
        XCTAssertFalse(backlog.wantsPass(head: nil, inMemory: 0))

        var counted = Backlog(capacity: 4)
        counted.unknownOnDisk()
        counted.tookHandedLine(nextRun: nil, uncounted: 3, earliestUncounted: entry(7))
        XCTAssertEqual(counted.waitingCount, 3)
        XCTAssertTrue(counted.mayClaim(entry(6)))
        XCTAssertFalse(counted.mayClaim(entry(8)), "behind what only a pass can find")
        XCTAssertTrue(counted.wantsPass(head: entry(8), inMemory: 1))
    }

    func testMerge_ofSortedRuns_isOneSortedStream() throws {
        let a = [entry(1), entry(4), entry(9)]
        let b = [entry(2), entry(3), entry(10)]
        let c: [BacklogEntry] = []
        var merge = try BacklogMerge([BacklogArraySource(a), BacklogArraySource(b), BacklogArraySource(c)])
        var out: [BacklogEntry] = []
        while let e = try merge.next() { out.append(e) }
        XCTAssertEqual(out, (a + b).sorted())
        XCTAssertNil(merge.peek)
    }

    func testRunCodec_roundTrips_andRejectsWhatIsNotOurs() {
        let e = entry(1_764_000_000_123, 7, attempt: 2)
        var bytes: [UInt8] = []
        BacklogRunCodec.append(e, to: &bytes)
        XCTAssertEqual(bytes.last, UInt8(ascii: "\n"))
        let decoded = BacklogRunCodec.decode(bytes.dropLast())
        XCTAssertEqual(decoded, e)
        XCTAssertEqual(decoded?.attempt, 2)
        XCTAssertNil(BacklogRunCodec.decode(Array("12 x 20261121T141003123Z-0000-a".utf8)))
        XCTAssertNil(BacklogRunCodec.decode(Array("12 1 ../etc/passwd".utf8)))
        XCTAssertNil(BacklogRunCodec.decode(Array("12 1".utf8)))
    }

    func testUntried_isDueAtTheTimeInItsId() {
        let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-x")!
        XCTAssertEqual(BacklogEntry.untried(id).notBefore, id.createdAt)
    }
}
