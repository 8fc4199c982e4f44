/// Where one upload attempt of `URLSessionTransport` is, across its redirect hops: one typed state
/// instead of flags (NIO's `NIOTypedHTTPServerUpgraderStateMachine`). Each event is a mutating
/// method that returns what the caller must do; the caller holds the transport's lock. The attempt
/// is finished when the transport removes it from its table (`finish`, exactly once).
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
        /// Past the deadline (its task, if running, told to cancel): the attempt ends with the
        /// timeout at once, without waiting for its task.
        case timedOut
        /// Stopped by `cancelAll` or its request's cancellation (its task, if running, told to
        /// cancel): the attempt ends `.cancelled` at once, unless it had already timed out.
        case cancelled
    }

    /// Why an attempt stops before its answer.
    enum Stop: Equatable { case timedOut, cancelled }

    private(set) var state: State = .preparing

    /// The stop decided so far, if any.
    var stop: Stop? {
        switch state {
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .preparing, .sending, .redirected, .answerCut: nil
        }
    }

    /// The hop's task, while one runs: its callbacks belong to this attempt until it ends.
    var task: Task? {
        switch state {
        case .sending(let task), .redirected(let task), .answerCut(let task): task
        case .preparing, .timedOut, .cancelled: nil
        }
    }

    /// A hop's task was made. Returns the stop decided meanwhile: the caller cancels the task
    /// unstarted and ends the attempt; nil: the caller resumes it.
    mutating func taskMade(_ task: Task) -> Stop? {
        switch state {
        case .preparing:
            state = .sending(task)
            return nil
        case .timedOut, .cancelled:
            return stop
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
        case .answerCut, .timedOut, .cancelled:
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

    /// The deadline passed. Returns the task to cancel, if it may be (and was not already).
    mutating func timeOut() -> Task? {
        defer { state = .timedOut }
        if case .sending(let task) = state { return task }
        return nil
    }

    /// `cancelAll`. Returns the task to cancel, if it may be; a timed-out attempt stays timed out.
    mutating func cancel() -> Task? {
        switch state {
        case .sending(let task):
            state = .cancelled
            return task
        case .preparing, .redirected, .answerCut:
            state = .cancelled
            return nil
        case .timedOut, .cancelled:
            return nil
        }
    }

    /// The hop's task completed. Returns the stop decided meanwhile; without one the attempt is
    /// preparing its next hop (or about to finish).
    mutating func taskEnded() -> Stop? {
        switch state {
        case .sending, .redirected, .answerCut:
            state = .preparing
            return nil
        case .preparing, .timedOut, .cancelled:
            return stop
        }
    }
}
