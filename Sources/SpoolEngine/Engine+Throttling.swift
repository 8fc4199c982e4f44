import SpoolCore
import SpoolStore
import SpoolTransport

/// Throttling (docs/http.md "Throttling"): a throttled answer hands its attempt back (`ItemLifecycle`)
/// and lowers the daemon's request rate (`RequestPacer`, told by `collectFinished` and by the
/// multipart uploads' steps); claims and direct uploads take a token each (`collectClaims`,
/// `startDirectUploads`), and a daemon held back sleeps until the next token is due
/// (`pollTimeout`). Here: saying so, once when the limit begins and once when it is lifted, and
/// keeping `SPOOL/throttled` for `spoold status`.
extension Engine {
    /// The limit as last logged and written.
    struct ShownLimit {
        var since: Timestamp
        var rate: Double
        var written: Timestamp
        /// The rate changed since it was written: write it again at this time.
        var rewriteAt: Timestamp?
    }

    /// The marker is rewritten at most this often while the rate changes.
    static let throttleMarkerSeconds = 1.0

    /// Logs and marks a limit that began, changed or was lifted since the last step (multipart
    /// parts change the rate on the transport's queue, between steps).
    func noteRequestRate(now: Timestamp) {
        let rate = pacer.current(now: now)
        if let shown = shownLimit, rate.limit?.since != shown.since {
            shownLimit = nil
            ThrottleMarker.remove(in: spool)
            log.info(
                "requests no longer limited: the endpoint throttled for \(formatSeconds(shown.since.seconds(until: now))) "
                    + "(\(rate.throttledAnswers) throttled answers since start)")
        }
        guard let limit = rate.limit else { return }
        if shownLimit == nil {
            log.warning(
                "the endpoint throttles (\(LogRedaction.urls(in: limit.reason))): requests limited to \(Engine.perSecond(limit.rate)) a second, "
                    + "raised again as they succeed; throttled attempts are not counted")
        } else if let shown = shownLimit, shown.rate == limit.rate || now < shown.written.adding(seconds: Engine.throttleMarkerSeconds) {
            if shown.rate != limit.rate { shownLimit?.rewriteAt = shown.written.adding(seconds: Engine.throttleMarkerSeconds) }
            return
        }
        shownLimit = ShownLimit(since: limit.since, rate: limit.rate, written: now)
        do {
            try ThrottleMarker.write(
                .init(since: limit.since, ratePerSecond: limit.rate, reason: LogRedaction.urls(in: limit.reason),
                      throttledAnswers: rate.throttledAnswers, updated: now, pausedUntil: rate.pausedUntil.flatMap { $0 > now ? $0 : nil }),
                in: spool)
        } catch {
            log.warning("cannot write \(spool.path)/\(ThrottleMarker.fileName) for 'spoold status': \(error)")
        }
    }

    /// `97.3` requests a second: one decimal below 100, whole numbers above.
    static func perSecond(_ rate: Double) -> String {
        rate >= 100 ? "\(Int(rate.rounded()))" : "\((rate * 10).rounded() / 10)"
    }
}
