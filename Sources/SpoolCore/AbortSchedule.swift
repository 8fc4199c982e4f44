/// The AbortMultipartUpload requests the daemon owes the store (`OwedAbort`), and when to send
/// each: at once, then again with the items' backoff while the store does not answer.
///
/// An abort is a request like any other: a 5xx, a throttled answer, a dropped connection or the
/// store refusing the credentials (a configuration problem the operator may fix while the daemon
/// runs) is retried after `RetryPolicy.delaySeconds` of its tries so far (`Retry-After` wins),
/// up to `--max-backoff` apart, for as long as the daemon runs; what is still owed when it stops
/// stays recorded in `SPOOL/parts/aborts.log` for the next start. The store confirms an abort
/// with a 2xx, or a 404 (NoSuchUpload: already aborted, completed or expired; the upload is gone
/// either way). Any other 4xx is a refusal no retry changes (the credentials may not abort): the
/// abort is held until the next start, when it is tried again.
///
/// Pure: the engine sends what `takeDue` returns and reports each answer to `ended`.
public struct AbortSchedule: Sendable {
    /// Aborts in flight at once: small requests, which must not crowd the uploads' connections.
    public static let maximumInFlight = 4

    public struct Entry: Equatable, Sendable {
        public var abort: OwedAbort
        /// Requests sent so far (in this daemon's life).
        public var tries = 0
        public var notBefore: Timestamp
        public var inFlight = false
        /// Why it waits for the next start (a refusal), or nil.
        public var heldBecause: String?
    }

    /// What an abort's answer means.
    public enum Verdict: Equatable, Sendable {
        /// The upload is gone: the debt is paid.
        case confirmed
        /// Worth sending again later.
        case retry
        /// Refused for a reason no retry changes (why).
        case refused(String)
    }

    /// What became of an abort that ended.
    public enum Result: Equatable, Sendable {
        case confirmed
        case retry(at: Timestamp, why: String)
        case held(why: String)
        /// Not one this schedule knows (ended twice): nothing to do.
        case unknown
    }

    private var entries: [String: Entry] = [:]

    public init() {}

    /// Owes `abort`; due at once. One already owed (the same upload id) stays as it is.
    public mutating func add(_ abort: OwedAbort, now: Timestamp) {
        guard entries[abort.uploadID] == nil else { return }
        entries[abort.uploadID] = Entry(abort: abort, notBefore: now)
    }

    /// The aborts to send now (oldest first), marked in flight, up to `maximumInFlight` in all.
    public mutating func takeDue(now: Timestamp) -> [OwedAbort] {
        var room = AbortSchedule.maximumInFlight - inFlightCount
        guard room > 0 else { return [] }
        var due: [OwedAbort] = []
        for entry in entries.values.sorted(by: { ($0.notBefore, $0.abort.since, $0.abort.uploadID) < ($1.notBefore, $1.abort.since, $1.abort.uploadID) })
        where room > 0 && !entry.inFlight && entry.heldBecause == nil && entry.notBefore <= now {
            entries[entry.abort.uploadID]?.inFlight = true
            entries[entry.abort.uploadID]?.tries += 1
            due.append(entry.abort)
            room -= 1
        }
        return due
    }

    /// The store answered the abort of `uploadID` with `outcome` (as the transport reported it).
    public mutating func ended(
        _ uploadID: String, outcome: UploadOutcome, policy: RetryPolicy, now: Timestamp, unitRandom: Double
    ) -> Result {
        guard var entry = entries[uploadID], entry.inFlight else { return .unknown }
        entry.inFlight = false
        switch AbortSchedule.judge(outcome) {
        case .confirmed:
            entries[uploadID] = nil
            return .confirmed
        case .refused(let why):
            entry.heldBecause = why
            entries[uploadID] = entry
            return .held(why: why)
        case .retry:
            let judged = S3ErrorClassifier.judge(outcome)
            let wait = policy.delaySeconds(afterAttempt: entry.tries, unitRandom: unitRandom, retryAfterSeconds: outcome.retryAfterSeconds)
            entry.notBefore = now.adding(seconds: wait)
            entries[uploadID] = entry
            return .retry(at: entry.notBefore, why: judged.summary)
        }
    }

    /// What the store's answer to one abort means (also for `purge`, which sends its own).
    public static func judge(_ outcome: UploadOutcome) -> Verdict {
        if let status = outcome.answer?.status, (200..<300).contains(status) || status == 404 || status == 410 { return .confirmed }
        if outcome.isCancelled { return .retry }
        let judged = S3ErrorClassifier.judge(outcome)
        switch judged.class {
        case .success: return .confirmed
        case .final: return .refused(judged.summary)
        case .retryable, .outage, .throttled, .configuration: return .retry
        }
    }

    /// When the next abort not in flight is due (held ones wait for the next start).
    public var nextDue: Timestamp? {
        entries.values.filter { !$0.inFlight && $0.heldBecause == nil }.map(\.notBefore).min()
    }

    public var owedCount: Int { entries.count }
    public var inFlightCount: Int { entries.values.filter(\.inFlight).count }
    /// Every abort owed, oldest first.
    public var owed: [Entry] { entries.values.sorted { ($0.abort.since, $0.abort.uploadID) < ($1.abort.since, $1.abort.uploadID) } }
}
