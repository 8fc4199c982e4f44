/// Where one upload attempt of `URLSessionTransport` is, across its redirect hops: one typed state
/// instead of flags (NIO's `NIOTypedHTTPServerUpgraderStateMachine`). Each event is a mutating
/// method that returns what the caller must do; the caller holds the transport's lock. The attempt
/// is finished when the transport removes it from its table (`finish` or `end`, exactly once).
///
/// Two rules of FoundationNetworking shape it: a task whose redirect callback was answered is never
/// cancelled (it traps if a cancel overtakes that answer), and a task told to cancel never gets its
/// redirect callback answered. Generic over the task so the rules are tested without a session.
struct AttemptPhase<Task: AnyObject> {
    enum State {
        /// No task: the body is being hashed, or the next hop's task is being made.
        case preparing
        /// The hop's task runs.
        case sending(Task)
        /// The hop's redirect callback was answered (declined): the task completes on its own
        /// with the 3xx, and is never cancelled.
        case redirected(Task)
        /// The hop's answer passed `answerCutBytes` and its task was told to cancel: the status
        /// already received is the outcome.
        case answerCut(Task)
        /// Ended before its answer (the deadline, a cancel), without waiting for its task: no
        /// task is made for it any more.
        case ended
    }

    private(set) var state: State = .preparing

    /// The hop's task, while one runs: its callbacks belong to this attempt until it ends.
    var task: Task? {
        switch state {
        case .sending(let task), .redirected(let task), .answerCut(let task): task
        case .preparing, .ended: nil
        }
    }

    /// A hop's task was made. Returns whether to resume it: not once the attempt has ended.
    mutating func taskMade(_ task: Task) -> Bool {
        switch state {
        case .preparing:
            state = .sending(task)
            return true
        case .ended:
            return false
        case .sending, .redirected, .answerCut:
            preconditionFailure("a new task while the hop's task runs")
        }
    }

    /// The task asks whether to follow a redirect (it is always declined). Returns whether to
    /// answer: never for a task told to cancel.
    mutating func redirectAsked(_ task: Task) -> Bool {
        switch state {
        case .sending(let running) where running === task:
            state = .redirected(running)
            return true
        case .answerCut, .ended:
            return false
        case .preparing, .sending, .redirected:
            return true
        }
    }

    /// The hop's answer passed `answerCutBytes`. Returns the task to cancel, if it may be.
    mutating func answerPassedCut() -> Task? {
        guard case .sending(let task) = state else { return nil }
        state = .answerCut(task)
        return task
    }

    /// The deadline passed, or the attempt was cancelled. Returns the task to cancel, if it may
    /// be: a running one, never a redirected one, and only once.
    mutating func end() -> Task? {
        defer { state = .ended }
        if case .sending(let task) = state { return task }
        return nil
    }

    /// The hop's task completed: the attempt prepares its next hop, or is about to finish.
    mutating func taskEnded() {
        if case .ended = state { return }
        state = .preparing
    }
}
