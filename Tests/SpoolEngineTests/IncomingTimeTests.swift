import Glibc
import SpoolCore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// When files in incoming/ are taken, under a manual clock: the settle rule, a writer that holds
/// a file open, the periodic rescan and an inotify overflow.
final class IncomingTimeTests: EngineTestCase {
    func testScannedFile_thatNoProcessHoldsOpen_isTakenAtOnce_howeverFresh() throws {
        // Written just before the start (a build step, then `spoold drain`): every writer closed it.
        try drop("fresh.txt", age: 0)
        let embedded = try start(configuration(settle: 2))

        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [0], "taken at the first look, not --settle later")
        XCTAssertEqual(temp.names(in: .incoming), [])
        XCTAssertEqual(fs.calls(.writerCheck).count, 1, "the kernel was asked")
    }

    func testScannedFile_heldOpenForWriting_waitsForItsWriterWhateverItsAge() throws {
        try drop("held.txt", age: 600)  // the writer paused long ago, but still holds the file
        fs.writerCheckAnswer = .openForWriting
        let embedded = try start(configuration(settle: 2))

        try embedded.advanceTime(to: 5)
        XCTAssertEqual(embedded.transport.started.count, 0, "a file open for writing is never taken")
        XCTAssertEqual(temp.names(in: .incoming), ["held.txt"])
        XCTAssertEqual(fs.calls(.writerCheck).count, 3, "asked at 0, 2 and 4 s (every --settle)")

        fs.writerCheckAnswer = nil  // the writer closed it (no close-write event: a missed one)
        try embedded.advanceTime(to: 5.999)
        XCTAssertEqual(embedded.transport.started.count, 0)
        try embedded.advanceTime(to: 6)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [6], "taken at the next look")
    }

    func testFileNeverAnnounced_isFoundAtTheRescanNotBefore() throws {
        let embedded = try start(configuration(settle: 2))
        try drop("missed.txt", age: 60)  // inotify never tells

        try embedded.advanceTime(to: 59.999)
        XCTAssertEqual(embedded.transport.started.count, 0, "no event, no scan before the rescan")
        try embedded.advanceTime(to: 60)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [60], "found by the rescan every 60 s")
    }

    func testInotifyOverflow_rescansAtOnce() throws {
        let embedded = try start(configuration(settle: 2))
        try embedded.advanceTime(to: 10)
        try drop("dropped-event.txt", age: 60)

        embedded.events.feedOverflow()
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [10], "taken at the overflow, not at 60 s")
    }

    func testCloseWrite_isTakenAtOnceWithoutSettling() throws {
        let embedded = try start(configuration(settle: 2))
        try drop("closed.txt", age: 0)

        embedded.events.feed(InotifyWatcher.closeWrite, name: "closed.txt")
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.startTimes(since: embedded.startedAt), [0], "a close-write announces a complete file")
    }
}
