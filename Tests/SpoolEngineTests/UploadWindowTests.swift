import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// `--upload-window` under a manual clock: outside the windows files are taken in as items and
/// nothing is sent; the engine sleeps until a window opens and starts uploading at it; a window
/// that closes lets the upload in flight finish, or (`--window-cuts`) cuts it and hands its
/// attempt back. Local time is UTC+01:00 here (a fixed rule), so the windows' times are not UTC's.
final class UploadWindowTests: EngineTestCase {
    /// Monday 2026-11-23, 20:00:07 UTC: 21:00:07 on the local clock (off the minute, so the
    /// engine's rescans, every 60 s from its start, do not fall on the opening).
    private let monday2100 = Timestamp(iso8601: "2026-11-23T20:00:07Z")!
    /// 22:00 local.
    private let opening = Timestamp(iso8601: "2026-11-23T21:00:00Z")!

    private func windowConfiguration(_ windows: [String], cuts: Bool = false, zone: LocalZone = .fixed(secondsEast: 3600)) throws
        -> EngineConfiguration
    {
        var configuration = configuration(settle: 0)
        configuration.uploadWindows = try UploadWindows.parse(windows)
        configuration.windowCuts = cuts
        configuration.zone = zone
        return configuration
    }

    private var marker: WindowMarker.Contents? { WindowMarker.read(in: try! temp.open()) }

    func testOutsideTheWindow_filesBecomeItems_nothingIsSent_andUploadsBeginAsItOpens() throws {
        clock.set(monday2100)
        for i in 0..<3 { try drop("f\(i).txt") }
        let embedded = try start(try windowConfiguration(["22:00-06:00"]))
        XCTAssertEqual(embedded.transport.started.count, 0, "nothing sent outside the window")
        XCTAssertEqual(attempts(in: .pending), [0, 0, 0], "taken in as items, not sent straight from incoming/")
        XCTAssertEqual(temp.names(in: .incoming), [])
        let held = try XCTUnwrap(marker, "SPOOL/window-closed while held")
        XCTAssertEqual(held.untilLocal, "22:00")
        XCTAssertEqual(held.until, opening)
        XCTAssertEqual(held.windows, "22:00-06:00")

        // A file dropped while held joins the queue too.
        try drop("late.txt")
        embedded.events.feed(InotifyWatcher.closeWrite, name: "late.txt")
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(attempts(in: .pending).count, 4)

        // Asleep until then: the steps on the way are the rescans, never a wake-up "now"
        // (`EmbeddedEngine` throws BusyLoop), and nothing is sent a millisecond early.
        try embedded.advanceTime(by: monday2100.seconds(until: opening) - 0.001)
        XCTAssertEqual(embedded.transport.started.count, 0)
        XCTAssertEqual(embedded.nextWake, opening, "woken at the opening")
        try embedded.advanceTime(by: 0.001)
        XCTAssertEqual(embedded.transport.startTimes(since: opening), [0], "the first upload starts as the window opens")
        XCTAssertNil(marker, "removed once the window is open")
    }

    func testAWindowThatCloses_letsTheUploadInFlightFinish_andSendsNoMore() throws {
        clock.set(Timestamp(iso8601: "2026-11-23T04:59:50Z")!)  // 05:59:50 local, 10 s before the window closes
        for i in 0..<2 { try drop("f\(i).txt") }
        let embedded = try start(try windowConfiguration(["22:00-06:00"]))
        XCTAssertEqual(embedded.transport.inFlight, 1, "one upload at a time")
        try embedded.advanceTime(by: 10)
        XCTAssertEqual(marker?.untilLocal, "22:00", "closed at 06:00")
        XCTAssertEqual(embedded.transport.cancelTimes, [], "the upload in flight goes on")
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 60)
        XCTAssertEqual(embedded.transport.started.count, 1, "the next item waits for the window")
        XCTAssertEqual(attempts(in: .pending), [0])
        embedded.engine.requestStop()
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.summary?.uploaded, 1, "the one in flight was uploaded")
        XCTAssertEqual(temp.names(in: .inflight), [])
    }

    func testWindowCuts_cancelsTheUploadInFlight_andHandsItsAttemptBackUncounted() throws {
        clock.set(Timestamp(iso8601: "2026-11-23T04:59:50Z")!)
        for i in 0..<2 { try drop("f\(i).txt") }
        let embedded = try start(try windowConfiguration(["22:00-06:00"], cuts: true))
        XCTAssertEqual(embedded.transport.inFlight, 1)
        try embedded.advanceTime(by: 9.999)
        XCTAssertEqual(embedded.transport.cancelTimes, [])
        try embedded.advanceTime(by: 0.001)
        XCTAssertEqual(embedded.transport.cancelTimes, [Timestamp(iso8601: "2026-11-23T05:00:00Z")!], "cut at 06:00 local")
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(attempts(in: .pending), [0, 0], "the cut attempt handed back uncounted; nothing counted")
        XCTAssertEqual(temp.names(in: .inflight), [])
        try embedded.advanceTime(by: 60)
        XCTAssertEqual(embedded.transport.started.count, 1, "nothing more sent")
    }

    /// An outage goes on inside the windows: held outside them, no probe is sent; at the opening
    /// the queue probes again.
    func testAnOutage_probesOnlyInsideTheWindows() throws {
        clock.set(Timestamp(iso8601: "2026-11-23T04:59:50Z")!)
        try drop("f0.txt")
        let embedded = try start(try windowConfiguration(["22:00-06:00"]))
        try embedded.transport.answerNext(.failed(.connectionRefused))
        try embedded.advanceTime(by: 0)
        XCTAssertNotNil(OutageMarker.read(in: try temp.open()), "an outage")
        try embedded.advanceTime(by: 8)  // probes at 1, 2, 4 s on (each refused)
        for _ in 0..<embedded.transport.inFlight { try embedded.transport.answerNext(.failed(.connectionRefused)) }
        try embedded.advanceTime(by: 2)  // 06:00 local: closed
        let sentBeforeClosing = embedded.transport.started.count
        for _ in 0..<embedded.transport.inFlight { try embedded.transport.answerNext(.failed(.connectionRefused)) }
        try embedded.advanceTime(by: 16 * 3600 - 1)
        XCTAssertEqual(embedded.transport.started.count, sentBeforeClosing, "no probe while held")
        XCTAssertNotNil(OutageMarker.read(in: try temp.open()), "the outage goes on")
        try embedded.advanceTime(by: 1)
        XCTAssertEqual(embedded.transport.started.count, sentBeforeClosing + 1, "a probe as the window opens")
    }

    /// Summer time begins (a rule with one change: UTC+01:00, then UTC+02:00 from 01:00 UTC): a
    /// window opening at 02:30, a time the clock skips, opens as the clock jumps to 03:00, and
    /// the sleeping engine wakes there.
    func testSummerTimeBegins_theEngineWakesAtTheJump() throws {
        let jump = Timestamp(iso8601: "2026-03-29T01:00:00Z")!
        let zone = LocalZone { $0 < jump.millisecondsSinceEpoch / 1000 ? 3600 : 7200 }
        clock.set(Timestamp(iso8601: "2026-03-28T23:00:07Z")!)  // 00:00:07 local
        try drop("f0.txt")
        let embedded = try start(try windowConfiguration(["02:30-04:00"], zone: zone))
        XCTAssertEqual(marker?.until, jump)
        XCTAssertEqual(marker?.untilLocal, "03:00", "the opening as the clock will read it")
        try embedded.advanceTime(by: 7192.999)
        XCTAssertEqual(embedded.transport.started.count, 0)
        try embedded.advanceTime(by: 0.001)
        XCTAssertEqual(embedded.transport.startTimes(since: jump), [0])
    }
}
