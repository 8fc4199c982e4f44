import SpoolCore
import SpoolStore

/// Upload windows and the rate timetable (docs/http.md "Upload windows and a rate timetable"), read in
/// local time (`UploadWindows`, `RateTimetable`, `LocalZone`).
///
/// Outside every `--upload-window` window the daemon holds its uploads: it claims nothing, sends
/// nothing straight from incoming/, probes no outage and sends no owed abort, and sleeps until
/// the next window opens (`pollTimeout`); intake goes on (files become items in pending/), and so
/// do the outage, the throttling and the queue's order, which pick up where they were when the
/// window opens. A window that closes lets the uploads in flight finish, unless `--window-cuts`:
/// then they are cancelled and their attempts handed back uncounted, as a second stop signal's.
/// Here: reading the windows at their changes, saying so once each time, keeping
/// `SPOOL/window-closed` for `spoold status`; and saying when the `--limit-rate` in force changes.
extension Engine {
    /// Where the windows stand, as last read.
    struct WindowState {
        /// Outside every window: uploads are held.
        var held: Bool
        /// Since when it is so (this engine's start, if it started so).
        var since: Timestamp
        /// When it next changes; nil: never (the windows cover the whole week).
        var until: Timestamp?
        /// When the windows were read: again at `until`, at least once a minute, and at once if
        /// the clock went back.
        var readAt: Timestamp
    }

    /// The `--limit-rate` in force as last said.
    struct RateState {
        var bytesPerSecond: Int64?
        var until: Timestamp?
        var readAt: Timestamp
    }

    /// A timetable is read again at least this often (a clock set forward, a zone that changed).
    static let timetableRereadSeconds = 60.0

    /// Outside every `--upload-window` window: nothing is sent.
    public var uploadsHeld: Bool { window?.held == true }

    /// When held uploads may go again (the next window opens); nil while they may go.
    public var uploadsHeldUntil: Timestamp? { uploadsHeld ? window?.until : nil }

    /// The `--limit-rate` in force at `now` (bytes per second; nil: no limit).
    public func limitRateInForce(now: Timestamp) -> Int64? {
        configuration.limitRate?.inForce(at: now, zone: configuration.zone).bytesPerSecond
    }

    /// Reads the windows if they may have changed, and acts on a change: logs it, writes or
    /// removes the marker, and (`--window-cuts`) cuts the uploads in flight when one closes.
    func noteUploadWindow(now: Timestamp) {
        guard let windows = configuration.uploadWindows else { return }
        if let window, Engine.isFresh(readAt: window.readAt, until: window.until, now: now) { return }
        let state = windows.inForce(at: now, zone: configuration.zone)
        let previous = window
        let held = !state.open
        let changed = previous?.held != held
        window = WindowState(held: held, since: changed ? now : previous!.since, until: state.until, readAt: now)
        guard changed || (held && previous?.until != state.until) else { return }
        let untilText = state.until.map { localClockText($0, now: now) }
        guard held, let until = state.until, let untilText else {
            WindowMarker.remove(in: spool)
            let rest = untilText.map { " until \($0)" } ?? " (they cover the whole week)"
            if let previous {
                log.info("upload window open\(rest): uploads resume after \(formatSeconds(previous.since.seconds(until: now))) held")
            } else {
                log.info("inside the upload windows (\(windows.text))\(rest)")
            }
            return
        }
        if changed {
            var what = previous == nil ? "outside the upload windows (\(windows.text))" : "upload window closed"
            what += ": uploads held until \(untilText) (\(until.iso8601)); files are still taken in"
            if !uploads.isEmpty {
                if configuration.windowCuts {
                    what += "; cutting \(uploads.count) upload(s) in flight (--window-cuts), their attempts handed back"
                    windowCut.formUnion(uploads.keys)
                    transport.cancelAll()
                } else {
                    what += "; \(uploads.count) upload(s) in flight finish"
                }
            }
            log.info(what)
        }
        do {
            // Shown by 'spoold status'; readable by others, like the log.
            try WindowMarker.write(
                .init(since: window!.since, until: until, untilLocal: untilText, windows: windows.text), in: spool)
        } catch {
            log.warning("cannot write \(spool.path)/\(WindowMarker.fileName) for 'spoold status': \(error)")
        }
    }

    /// Says when the `--limit-rate` in force changes (the transport changes it by itself,
    /// `SendRate`): once at the start and at each change of a timetable.
    func noteLimitRate(now: Timestamp) {
        guard let timetable = configuration.limitRate, !timetable.schedule.isConstant else { return }
        if let shown = shownRate, Engine.isFresh(readAt: shown.readAt, until: shown.until, now: now) { return }
        let state = timetable.inForce(at: now, zone: configuration.zone)
        let previous = shownRate
        shownRate = RateState(bytesPerSecond: state.bytesPerSecond, until: state.until, readAt: now)
        guard previous == nil || previous?.bytesPerSecond != state.bytesPerSecond else { return }
        let rate = state.bytesPerSecond.map { "\(ByteText.format($0))/s" } ?? "off (no limit)"
        let until = state.until.map { " until \(localClockText($0, now: now))" } ?? ""
        log.info("--limit-rate now \(rate)\(until)")
    }

    /// `time` on the local clock: `22:00`, or `Sat 08:00` a day or more after `now`.
    public func localClockText(_ time: Timestamp, now: Timestamp) -> String {
        let zone = configuration.zone
        return WeekClock.text(zone.localMilliseconds(at: time), from: zone.localMilliseconds(at: now))
    }

    /// When the windows or the timetable must be read again: at their next change, or a minute on.
    var nextTimetableRead: Timestamp? {
        [window.map { ($0.readAt, $0.until) }, shownRate.map { ($0.readAt, $0.until) }].compactMap { $0 }
            .map { read in min(read.1 ?? read.0.adding(seconds: Engine.timetableRereadSeconds), read.0.adding(seconds: Engine.timetableRereadSeconds)) }
            .min()
    }

    /// What was read at `readAt` and holds until `until` still holds at `now`.
    static func isFresh(readAt: Timestamp, until: Timestamp?, now: Timestamp) -> Bool {
        readAt <= now && now < readAt.adding(seconds: timetableRereadSeconds) && until.map { now < $0 } ?? true
    }
}
