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
        /// Send the file taken straight from incoming/ to `to` (inflight/<id>.a1, by
        /// `Spool.takeForDirectUpload`): no json, no index record, nothing synced.
        case uploadDirect(to: ItemLocation)
        /// Delete the pair (or move it to done/): the server accepted it.
        case complete(from: ItemLocation, to: ItemLocation?)
        /// Delete the blob of a direct take the server accepted: nothing of it was recorded, so
        /// the removal is all that records its success (a daemon that keeps done items takes
        /// nothing directly).
        case discardDirect(from: ItemLocation)
        /// Back to pending with the next attempt due at `notBefore` (the pending json's mtime).
        case requeue(from: ItemLocation, to: ItemLocation, notBefore: Timestamp)
        /// Back to pending with the attempt not counted (`to` is one attempt lower than `from`),
        /// due at once; the history is left as it was.
        case handBack(from: ItemLocation, to: ItemLocation, notBefore: Timestamp)
        /// Give up: to failed/ with the attempt history.
        case fail(from: ItemLocation, to: ItemLocation, reason: FailureReason)
        /// An operator's `spoold retry`: from failed/ back to pending/ with a fresh count, due at `notBefore`.
        case retry(from: ItemLocation, to: ItemLocation, notBefore: Timestamp)
        /// Delete the pair (`spoold purge`, or `--when-full drop-oldest`).
        case purge(from: ItemLocation)

        /// The index record that makes this action durable (`index.wal`), so no caller builds one by
        /// hand. A direct take and the discard of its blob have none (nothing of the item is
        /// recorded): asking is a programmer error.
        public func record(for id: ItemID) -> IndexRecord {
            switch self {
            case .claimAndUpload(let from, let to): IndexRecord(.claim, id, from: from, to: to)
            case .uploadDirect, .discardDirect: preconditionFailure("a direct take records nothing: \(self)")
            case .complete(let from, let to): IndexRecord(.done, id, from: from, to: to)
            case .requeue(let from, let to, _), .handBack(let from, let to, _): IndexRecord(.requeue, id, from: from, to: to)
            case .fail(let from, let to, _): IndexRecord(.fail, id, from: from, to: to)
            case .retry(let from, let to, _): IndexRecord(.retry, id, from: from, to: to)
            case .purge(let from): IndexRecord(.purge, id, from: from, to: nil)
            }
        }
    }

    /// How the item's attempt in progress (or its last one) was taken.
    public enum Take: Equatable, Sendable {
        /// Claimed from pending/ (or found there): the item is recorded, json and index.
        case claimed
        /// Taken straight from incoming/ (`takeDirect`): nothing of it is recorded yet, so the
        /// move that ends its attempt other than in success writes its first json and is made
        /// durable with the take itself (`SpoolTransition.fromDirectUpload`).
        case direct
    }

    public private(set) var location: ItemLocation
    /// Earliest time the item may be claimed.
    public private(set) var notBefore: Timestamp
    public private(set) var take = Take.claimed

    public init(location: ItemLocation, notBefore: Timestamp) {
        self.location = location
        self.notBefore = notBefore
    }

    /// A file announced in incoming/ is sent at once as a new item's first attempt: it is already
    /// in inflight/ as attempt 1 (`Spool.takeForDirectUpload`), with nothing recorded.
    public static func takeDirect(now: Timestamp) -> (ItemLifecycle, Action) {
        var item = ItemLifecycle(location: ItemLocation(.inflight, attempt: 1), notBefore: now)
        item.take = .direct
        return (item, .uploadDirect(to: item.location))
    }

    public var state: ItemState { location.state }
    public var attemptsMade: Int { location.attempt }

    public func isDue(at now: Timestamp) -> Bool { location.state == .pending && notBefore <= now }

    /// Claims a due pending item for an upload. An item whose count is already at the largest a
    /// file name can hold (`.a9999`, only ever made by hand) goes to failed/ instead: never a trap.
    public mutating func claim() -> Action {
        precondition(location.state == .pending, "claim of an item in \(location)")
        let from = location
        guard from.attempt < ItemFileName.maximumAttempt else {
            location = ItemLocation(.failed, attempt: from.attempt)
            return .fail(
                from: from, to: location,
                reason: FailureReason(.attemptLimit, "attempt count at its limit (\(from.attempt)); 'spoold retry' starts it again at 0"))
        }
        location = ItemLocation(.inflight, attempt: from.attempt + 1)
        take = .claimed
        return .claimAndUpload(from: from, to: location)
    }

    /// Applies the outcome of the attempt in progress.
    /// - Parameters:
    ///   - earlier: how the attempts before this one ended (`AttemptTally(ended: N - 1, history:)`
    ///     from the json); nil means they were all answered.
    ///   - keepDone: move accepted items to done/ instead of deleting them.
    ///   - unitRandom: in `[0, 1)`, for the backoff jitter.
    public mutating func finish(
        _ outcome: UploadOutcome, policy: RetryPolicy, earlier: AttemptTally? = nil, now: Timestamp, unitRandom: Double,
        keepDone: Bool = false
    ) -> Action {
        precondition(location.state == .inflight, "finish of an item in \(location)")
        let from = location
        switch outcome.class {
        case .success:
            location = ItemLocation(.done, attempt: from.attempt)
            if take == .direct { return .discardDirect(from: from) }
            return .complete(from: from, to: keepDone ? location : nil)
        case .final:
            location = ItemLocation(.failed, attempt: from.attempt)
            if case .refused(let refusal) = outcome { return .fail(from: from, to: location, reason: FailureReason(refusal.code, outcome.summary)) }
            return .fail(from: from, to: location, reason: FailureReason(.serverRefused, "\(outcome.summary): the server refused the item"))
        case .outage, .throttled, .configuration:
            // The endpoint was unreachable, refuses every upload, or asked for fewer requests: not
            // the item's fault, so the attempt is handed back (the daemon's request rate paces the
            // next one).
            return handBack(now: now)
        case .retryable:
            let before = earlier ?? AttemptTally(answered: from.attempt - 1, interrupted: 0)
            let tally = before.addingAnswered()
            if let used = policy.exhaustedBudget(tally) {
                location = ItemLocation(.failed, attempt: from.attempt)
                // "on attempt 3 of 3" when no crash got in the way; else say which budget is used up.
                let budget = tally.interrupted == 0 ? " of \(policy.maximumAttempts)" : " (\(used))"
                return .fail(
                    from: from, to: location, reason: FailureReason(.attemptsUsed, "\(outcome.summary) on attempt \(from.attempt)\(budget)"))
            }
            let delay = policy.delaySeconds(
                afterAttempt: tally.answered, unitRandom: unitRandom, retryAfterSeconds: outcome.retryAfterSeconds)
            location = ItemLocation(.pending, attempt: from.attempt)
            notBefore = now.adding(seconds: delay)
            return .requeue(from: from, to: location, notBefore: notBefore)
        }
    }

    /// Returns an attempt that did not count against the item (endpoint unreachable or throttling,
    /// or the upload cancelled by an operator's second stop signal): inflight.aN goes back to
    /// pending.a(N-1).
    public mutating func handBack(now: Timestamp) -> Action {
        precondition(location.state == .inflight, "hand-back of an item in \(location)")
        let from = location
        location = ItemLocation(.pending, attempt: from.attempt - 1)
        notBefore = now
        return .handBack(from: from, to: location, notBefore: now)
    }

    /// The item cannot be uploaded (unreadable json, a missing or changed blob, a URL it may not
    /// use): parked in failed/ as it is, its attempts as counted so far.
    public mutating func quarantine(reason: FailureReason) -> Action {
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

    /// An item found in inflight/ at start-up: its attempt was interrupted (no outcome recorded).
    /// The attempt stays counted in `N` (recovery keeps the count) but against the interrupted budget,
    /// so a crash does not use up an innocent item's answered attempts; the item may be tried
    /// again at once unless a budget is used up (then to failed/).
    /// - Parameter earlier: how the attempts before this one ended (`AttemptTally(ended: N - 1, history:)`).
    public mutating func recoverInterrupted(policy: RetryPolicy, earlier: AttemptTally, now: Timestamp) -> Action {
        precondition(location.state == .inflight, "recovery of an item in \(location)")
        let from = location
        if let used = policy.exhaustedBudget(earlier.addingInterrupted()) {
            location = ItemLocation(.failed, attempt: from.attempt)
            return .fail(from: from, to: location, reason: FailureReason(.interrupted, "interrupted on attempt \(from.attempt): \(used)"))
        }
        location = ItemLocation(.pending, attempt: from.attempt)
        notBefore = now
        return .requeue(from: from, to: location, notBefore: now)
    }
}
