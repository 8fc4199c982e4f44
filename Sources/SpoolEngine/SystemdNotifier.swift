import Glibc
import SpoolCore
import SpoolSystem

/// Tells systemd how the daemon is doing (`Type=notify`): `READY=1` once recovery is done,
/// `STATUS=` with the queue and the outage state when it changes (at most once a second),
/// `WATCHDOG=1` every half `WATCHDOG_USEC` from the loop itself (so a stuck loop stops the
/// pings and systemd restarts it), and `STOPPING=1` when shutdown begins.
public final class SystemdNotifier: EngineObserver {
    private let socket: NotifySocket
    /// Half the watchdog timeout, or nil when systemd set none (or set it for another process).
    let watchdogSeconds: Double?
    private var nextWatchdog: Timestamp?
    private var sentStatus: String?
    private var sentStatusAt: Timestamp?
    private var stoppingSent = false

    /// The notifier for `$NOTIFY_SOCKET`, or nil when spoold was not started by a service manager.
    public static func fromEnvironment(_ environment: [String: String]) -> SystemdNotifier? {
        guard let name = environment["NOTIFY_SOCKET"], let socket = NotifySocket(name: name) else { return nil }
        var watchdog: Double?
        if let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0 {
            // WATCHDOG_PID names the process meant; a child that inherited the variable is not it.
            if let pid = environment["WATCHDOG_PID"], pid != String(getpid()) { watchdog = nil } else { watchdog = Double(usec) / 2_000_000 }
        }
        return SystemdNotifier(socket: socket, watchdogSeconds: watchdog)
    }

    init(socket: NotifySocket, watchdogSeconds: Double?) {
        self.socket = socket
        self.watchdogSeconds = watchdogSeconds
    }

    public func engineStarted(_ engine: Engine, now: Timestamp) {
        let status = SystemdNotifier.status(of: engine)
        var message = "READY=1\nSTATUS=\(status)"
        if let watchdogSeconds {
            message += "\nWATCHDOG=1"
            nextWatchdog = now.adding(seconds: watchdogSeconds)
        }
        socket.send(message)
        (sentStatus, sentStatusAt) = (status, now)
    }

    public func engineWillWait(_ engine: Engine, now: Timestamp) -> Timestamp? {
        var wake: Timestamp?
        if engine.stopLevel > 0 && !stoppingSent {
            stoppingSent = true
            socket.send("STOPPING=1")
        }
        let status = SystemdNotifier.status(of: engine)
        if status != sentStatus {
            let allowed = sentStatusAt.map { $0.adding(seconds: 1) } ?? now
            if allowed <= now {
                socket.send("STATUS=\(status)")
                (sentStatus, sentStatusAt) = (status, now)
            } else {
                wake = allowed
            }
        }
        if let watchdogSeconds, let due = nextWatchdog {
            var next = due
            if due <= now {
                socket.send("WATCHDOG=1")
                next = now.adding(seconds: watchdogSeconds)
                nextWatchdog = next
            }
            wake = min(wake ?? next, next)
        }
        return wake
    }

    public func engineFinished(_ engine: Engine, now: Timestamp) {
        guard !stoppingSent else { return }
        stoppingSent = true
        socket.send("STOPPING=1")
    }

    /// `3 pending, 1 uploading; 12 uploaded, 0 failed since start`, a pause outside the upload
    /// windows and the outage if any.
    static func status(of engine: Engine) -> String {
        let uploading = engine.uploads.count
        var text = "\(engine.pendingCount) pending, \(uploading) uploading; "
            + "\(engine.summary.uploaded) uploaded, \(engine.summary.failed) failed since start"
        if let until = engine.uploadsHeldUntil {
            text += "; uploads paused until \(engine.localClockText(until, now: engine.clock.now())) (outside --upload-window)"
        }
        if let outage = engine.outage {
            text += "; endpoint unreachable since \(outage.since.iso8601) (\(outage.reason)), uploads paused"
        }
        return text
    }
}
