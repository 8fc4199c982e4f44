/// The life of one item as a pure state machine: events in, actions out.
///
/// The engine owns one per known item, performs the returned action on disk, and only then
/// considers it done. Time and randomness come in with the events, so a test can run days of
/// retries in microseconds.
public struct ItemLifecycle: Equatable, Sendable {
    /// What the caller must do next.
    public enum Action: Equatable, Sendable {
        /// Rename pending/<id>.a(N-1) to inflight/<id>.aN (the attempt is counted before sending),
        /// make it durable, then send the request.
        case claimAndUpload(from: ItemLocation, to: ItemLocation)
        /// Delete the pair (or move it to done/): the server accepted it.
        case complete(from: ItemLocation, to: ItemLocation?)
        /// Back to pending with the next attempt due at `notBefore` (the pending json's mtime).
        case requeue(from: ItemLocation, to: ItemLocation, notBefore: Timestamp)
        /// Back to pending with the attempt not counted (`to` is one attempt lower than `from`),
        /// due at once; the history is left as it was.
        case handBack(from: ItemLocation, to: ItemLocation, notBefore: Timestamp)
        /// Give up: to failed/ with the attempt history.
        case fail(from: ItemLocation, to: ItemLocation, reason: String)
        /// An operator's `spoold retry`: from failed/ back to pending/ with a fresh count, due at `notBefore`.
        case retry(from: ItemLocation, to: ItemLocation, notBefore: Timestamp)
        /// Delete the pair (`spoold purge`, or `--when-full drop-oldest`).
        case purge(from: ItemLocation)

        /// The index record that makes this action durable (`index.wal`), so no caller builds one by hand.
        public func record(for id: ItemID) -> IndexRecord {
            switch self {
            case .claimAndUpload(let from, let to): IndexRecord(.claim, id, from: from, to: to)
            case .complete(let from, let to): IndexRecord(.done, id, from: from, to: to)
            case .requeue(let from, let to, _), .handBack(let from, let to, _): IndexRecord(.requeue, id, from: from, to: to)
            case .fail(let from, let to, _): IndexRecord(.fail, id, from: from, to: to)
            case .retry(let from, let to, _): IndexRecord(.retry, id, from: from, to: to)
            case .purge(let from): IndexRecord(.purge, id, from: from, to: nil)
            }
        }
    }

    public private(set) var location: ItemLocation
    /// Earliest time the item may be claimed.
    public private(set) var notBefore: Timestamp

    public init(location: ItemLocation, notBefore: Timestamp) {
        self.location = location
        self.notBefore = notBefore
    }

    public var state: ItemState { location.state }
    public var attemptsMade: Int { location.attempt }

    public func isDue(at now: Timestamp) -> Bool { location.state == .pending && notBefore <= now }

    /// Claims a due pending item for an upload.
    public mutating func claim() -> Action {
        precondition(location.state == .pending, "claim of an item in \(location)")
        let from = location
        location = ItemLocation(.inflight, attempt: from.attempt + 1)
        return .claimAndUpload(from: from, to: location)
    }

    /// Applies the outcome of the attempt in progress.
    /// - Parameters:
    ///   - keepDone: move accepted items to done/ instead of deleting them.
    ///   - unitRandom: in `[0, 1)`, for the backoff jitter.
    public mutating func finish(
        _ outcome: UploadOutcome, policy: RetryPolicy, now: Timestamp, unitRandom: Double, keepDone: Bool = false
    ) -> Action {
        precondition(location.state == .inflight, "finish of an item in \(location)")
        let from = location
        switch outcome.class {
        case .success:
            location = ItemLocation(.done, attempt: from.attempt)
            return .complete(from: from, to: keepDone ? location : nil)
        case .final:
            location = ItemLocation(.failed, attempt: from.attempt)
            let reason = outcome.refusal != nil ? outcome.summary : "\(outcome.summary): the server refused the item"
            return .fail(from: from, to: location, reason: reason)
        case .outage:
            // The endpoint was unreachable: not the item's fault, so the attempt is handed back.
            return handBack(now: now)
        case .retryable:
            guard policy.allowsAnotherAttempt(after: from.attempt) else {
                location = ItemLocation(.failed, attempt: from.attempt)
                return .fail(
                    from: from, to: location,
                    reason: "\(outcome.summary) on attempt \(from.attempt) of \(policy.maximumAttempts)")
            }
            let delay = policy.delaySeconds(
                afterAttempt: from.attempt, unitRandom: unitRandom, retryAfterSeconds: outcome.retryAfterSeconds)
            location = ItemLocation(.pending, attempt: from.attempt)
            notBefore = now.adding(seconds: delay)
            return .requeue(from: from, to: location, notBefore: notBefore)
        }
    }

    /// Returns an attempt that did not count against the item (endpoint unreachable, or the upload
    /// cancelled by an operator's second stop signal): inflight.aN goes back to pending.a(N-1).
    public mutating func handBack(now: Timestamp) -> Action {
        precondition(location.state == .inflight, "hand-back of an item in \(location)")
        let from = location
        location = ItemLocation(.pending, attempt: from.attempt - 1)
        notBefore = now
        return .handBack(from: from, to: location, notBefore: now)
    }

    /// The item cannot be uploaded (unreadable json, a missing or changed blob, a URL it may not
    /// use): parked in failed/ as it is, its attempts as counted so far.
    public mutating func quarantine(reason: String) -> Action {
        precondition(location.state == .pending || location.state == .inflight, "quarantine of an item in \(location)")
        let from = location
        location = ItemLocation(.failed, attempt: from.attempt)
        return .fail(from: from, to: location, reason: reason)
    }

    /// `spoold retry` of a failed item: back to pending/ as attempt 0, due at once.
    public mutating func retry(now: Timestamp) -> Action {
        precondition(location.state == .failed, "retry of an item in \(location)")
        let from = location
        location = ItemLocation(.pending, attempt: 0)
        notBefore = now
        return .retry(from: from, to: location, notBefore: now)
    }

    /// The item is deleted wherever it is (the caller checks that no upload of it is running).
    public func purge() -> Action { .purge(from: location) }

    /// An item found in inflight/ at start-up: its attempt stays counted (RELIABILITY rule 7),
    /// and it may be tried again at once unless that attempt was its last.
    public mutating func recoverInterrupted(policy: RetryPolicy, now: Timestamp) -> Action {
        precondition(location.state == .inflight, "recovery of an item in \(location)")
        let from = location
        guard policy.allowsAnotherAttempt(after: from.attempt) else {
            location = ItemLocation(.failed, attempt: from.attempt)
            return .fail(
                from: from, to: location,
                reason: "interrupted on attempt \(from.attempt) of \(policy.maximumAttempts) (spoold stopped mid-upload)")
        }
        location = ItemLocation(.pending, attempt: from.attempt)
        notBefore = now
        return .requeue(from: from, to: location, notBefore: now)
    }
}
