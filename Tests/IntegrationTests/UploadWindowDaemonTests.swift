import Foundation
import UploadReceiver
import XCTest

/// `--upload-window` and `--window-cuts` with the real binary and a real clock: windows computed
/// from the current time, a few seconds wide (the rules themselves are tested under a manual
/// clock: `UploadWindowTests`, `UploadWindowsTests`). The daemon's zone is UTC+05:30 (`TZ`), so
/// the windows are read in local time, not UTC.
final class UploadWindowDaemonTests: XCTestCase {
    private static let zone = ["TZ": "IST-5:30"]  // POSIX: 5.5 hours east of UTC, no summer time

    /// `HH:MM:SS` on a clock `offset` seconds east of UTC, `seconds` from now.
    private static func clock(in seconds: Double, offset: Int = 19_800) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offset)!
        let parts = calendar.dateComponents([.hour, .minute, .second], from: Date().addingTimeInterval(seconds))
        return String(format: "%02d:%02d:%02d", parts.hour!, parts.minute!, parts.second!)
    }

    private func jsons(_ spool: TestSpool, in folder: String) -> [String] {
        spool.files(in: folder).filter { $0.hasSuffix(".json") }
    }

    /// Outside the window files become items and wait; `status` and the metrics say until when;
    /// the window opens and they go; it closes, and a new file waits again.
    func testOutsideTheWindow_filesWaitAsItems_statusSaysUntilWhen_andTheyGoWhenItOpens() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        for i in 0..<3 { try spool.drop("w\(i).txt", payload(300, seed: UInt64(i))) }
        let (opens, closes) = (Self.clock(in: 4), Self.clock(in: 7))
        let metrics = spool.path + ".prom"
        let daemon = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--upload-window", "\(opens)-\(closes)",
             "--metrics-file", metrics], environment: Self.zone)
        addTeardownBlock { daemon.signal(SIGKILL) }

        let marker = spool.path + "/window-closed"
        XCTAssertTrue(
            waitUntil(timeout: 3) { self.jsons(spool, in: "pending").count == 3 && FileManager.default.fileExists(atPath: marker) },
            daemon.readErr())
        XCTAssertEqual(receiver.requests.count, 0, "nothing sent outside the window")
        XCTAssertTrue(daemon.readErr().contains("outside the upload windows (\(opens)-\(closes)): uploads held until \(opens)"), daemon.readErr())
        let status = try SpooldProcess.run(["status", "--spool", spool.path])
        XCTAssertTrue(status.stdout.contains("uploads  paused until \(opens) ("), status.stdout)
        XCTAssertTrue(status.stdout.contains("outside --upload-window \(opens)-\(closes); files are still taken in"), status.stdout)
        let json = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        let window = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["window"] as? [String: Any])
        XCTAssertEqual(window["held"] as? Bool, true)
        XCTAssertEqual(window["untilLocal"] as? String, opens)
        let exposition = try String(contentsOfFile: metrics, encoding: .utf8)
        XCTAssertTrue(exposition.contains("\nspoold_upload_window_open 0\n"), exposition)
        XCTAssertFalse(exposition.contains("\nspoold_uploads_paused_until_timestamp_seconds 0\n"), exposition)

        XCTAssertTrue(waitUntil(timeout: 15) { receiver.requests.filter(\.bodyComplete).count == 3 }, daemon.readErr())
        XCTAssertTrue(waitUntil(timeout: 5) { !FileManager.default.fileExists(atPath: marker) }, "removed once the window opened")
        XCTAssertTrue(daemon.readErr().contains("upload window open until \(closes): uploads resume"), daemon.readErr())

        XCTAssertTrue(waitUntil(timeout: 15) { daemon.readErr().contains("upload window closed") }, daemon.readErr())
        try spool.drop("late.txt", payload(300, seed: 9))
        XCTAssertTrue(waitUntil(timeout: 5) { self.jsons(spool, in: "pending").count == 1 }, daemon.readErr())
        XCTAssertEqual(receiver.requests.count, 3, "a file dropped after the window closed waits")
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker))
    }

    /// `--window-cuts`: the window closes on an upload that would take 16 s (64 KiB at 4 KiB/s);
    /// it is cut, and its attempt handed back uncounted (the item in pending/ as attempt 0).
    func testWindowCuts_cutsTheUploadInFlight_andHandsItsAttemptBack() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        try spool.drop("long.bin", payload(64 << 10, seed: 3))
        let daemon = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--limit-rate", "4K",
             "--upload-window", "\(Self.clock(in: -60))-\(Self.clock(in: 2))", "--window-cuts"], environment: Self.zone)
        addTeardownBlock { daemon.signal(SIGKILL) }

        XCTAssertTrue(waitUntil(timeout: 10) { daemon.readErr().contains("cutting 1 upload(s) in flight (--window-cuts)") }, daemon.readErr())
        XCTAssertTrue(waitUntil(timeout: 5) { self.jsons(spool, in: "pending").first?.hasSuffix(".a0.json") == true }, daemon.readErr())
        XCTAssertEqual(spool.files(in: "inflight"), [])
        XCTAssertEqual(receiver.requests.filter(\.bodyComplete).count, 0, "cut before its body was sent")
        let item = try XCTUnwrap(jsons(spool, in: "pending").first)
        let metadata = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: spool.path + "/pending/" + item)))
        XCTAssertEqual(((metadata as? [String: Any])?["attempts"] as? [Any])?.count ?? 0, 0, "no attempt in its history")
    }

    /// The timetable and the windows are said back at start, sizes exactly; what cannot be read
    /// is a usage error naming the entry (the sizes in a timetable through the one size parser).
    func testTimetablesAndWindows_areSaidBackAtStart_andMistakesAreUsageErrors() throws {
        let spool = try TestSpool(self)
        let drain = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/up/", "--limit-rate", "Mon-08:00,512K 18:00,off",
             "--upload-window", "22:00-06:00", "--upload-window", "Sat-08:00-18:00", "--window-cuts"])
        XCTAssertEqual(drain.exitCode, 0, drain.stderr)
        XCTAssertTrue(
            drain.stderr.contains("--limit-rate Mon-08:00 512 KiB/s, 18:00 off, --upload-window 22:00-06:00, Sat-08:00-18:00 (--window-cuts))"),
            drain.stderr)
        for (arguments, message) in [
            (["--limit-rate", "08:00,5MB"], "--limit-rate '5MB' is ambiguous (powers of 1000 or of 1024?): write 5M or 5MiB"),
            (["--limit-rate", "08:00,0"], "--limit-rate '0' (0 B) must be at least 1 B"),
            (["--limit-rate", "08:00,1M 25:00,off"], "--limit-rate: '25:00,off': '25:00' is not a time HH:MM (00:00 to 23:59) or HH:MM:SS"),
            (["--upload-window", "22:00-6:00"], "--upload-window: '22:00-6:00': '6:00' is not a time HH:MM (00:00 to 23:59) or HH:MM:SS"),
            (["--window-cuts"], "--window-cuts needs --upload-window"),
        ] {
            let result = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/up/"] + arguments)
            XCTAssertEqual(result.exitCode, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains(message), result.stderr)
        }
    }
}
