import Dispatch
import Foundation
import Glibc
import SpoolCore
import SpoolSystem
import Synchronization

/// Runs `--on-success` and `--on-failure`: `/bin/sh -c CMD` once per item outcome, with the item
/// in `SPOOLD_*` environment variables, off the engine's thread.
///
/// - Never blocks uploads: the engine only enqueues (`itemFinished`); at most `concurrency` hooks
///   run at once on their own threads, the rest wait in a queue of at most `queueLimit`; when it
///   is full a hook is dropped, logged with a running count.
/// - Bounded: a hook still running after `timeoutSeconds` gets SIGTERM, and SIGKILL
///   `killGraceSeconds` later, sent to its whole process group (the shell and its children).
/// - A hook that fails, hangs or cannot start is logged; it changes nothing about the item.
public final class HookRunner: EngineObserver, Sendable {
    public struct Commands: Sendable {
        public var onSuccess: String?
        public var onFailure: String?
        public var timeoutSeconds: Double
        public var killGraceSeconds: Double = 5
        public var concurrency = 4
        public var queueLimit = 1000

        /// `--hook-timeout`'s default.
        public static let defaultTimeoutSeconds = 60.0

        public init(onSuccess: String?, onFailure: String?, timeoutSeconds: Double = Commands.defaultTimeoutSeconds) {
            (self.onSuccess, self.onFailure, self.timeoutSeconds) = (onSuccess, onFailure, timeoutSeconds)
        }

        public var isEmpty: Bool { onSuccess == nil && onFailure == nil }
    }

    private struct State {
        var queue: [ItemOutcomeEvent] = []
        var head = 0
        var running = 0
        var dropped = 0
        var children = Set<pid_t>()
        var waiting: Int { queue.count - head }
    }

    private let commands: Commands
    private let spoolPath: String
    private let log: EventLog
    /// The daemon's environment without our own `SPOOLD_*` item variables and the withheld ones.
    private let baseEnvironment: [String]
    private let state = Mutex(State())
    /// Running workers; each is a thread of its own, not a Dispatch block: a hook blocks its
    /// worker for up to the timeout, and blocked blocks would starve Dispatch's small global
    /// pool (2 threads on 2 cores), which URLSession's completions need (measured: uploads
    /// stalled for as long as 4 hooks slept).
    private let active = DispatchGroup()

    static let itemVariables = ["SPOOLD_ID", "SPOOLD_NAME", "SPOOLD_STATUS", "SPOOLD_SIZE", "SPOOLD_SPOOL", "SPOOLD_REASON"]

    /// - Parameter withheld: variables a hook must not see (secrets: `--header-env`'s variables,
    ///   the AWS credentials), dropped from the environment hooks inherit.
    public init(_ commands: Commands, spoolPath: String, log: EventLog, withholding withheld: Set<String> = []) {
        self.commands = commands
        self.spoolPath = spoolPath
        self.log = log
        var inherited: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
            if !HookRunner.itemVariables.contains(name), !withheld.contains(name) { inherited.append(text) }
            entry += 1
        }
        baseEnvironment = inherited
    }

    public func itemFinished(_ event: ItemOutcomeEvent) {
        guard command(for: event.kind) != nil else { return }
        enum Decision { case queued, startWorker, dropped(Int) }
        let decision: Decision = state.withLock { state in
            guard state.waiting < commands.queueLimit else {
                state.dropped += 1
                return .dropped(state.dropped)
            }
            state.queue.append(event)
            guard state.running < commands.concurrency else { return .queued }
            state.running += 1
            return .startWorker
        }
        switch decision {
        case .queued:
            break
        case .startWorker:
            active.enter()
            let worker = Thread { [self] in
                while let next = takeNext() { run(next) }
                active.leave()
            }
            worker.name = "spoold.hooks"
            worker.start()
        case .dropped(let count):
            log.warning("hook queue full (\(commands.queueLimit) waiting): \(label(event.kind)) hook for \(event.id) dropped (\(count) dropped so far)")
        }
    }

    /// Waits for queued and running hooks, at most `seconds`; then kills what still runs and
    /// skips what still waits, and logs both. Called once the engine has stopped.
    public func finish(waitingAtMostSeconds seconds: Double) {
        let waiting = state.withLock { $0.waiting + $0.running }
        if waiting > 0 { log.info("waiting for \(waiting) hook(s) to finish (at most \(Int(seconds.rounded(.up))) s)") }
        if active.wait(timeout: .now() + seconds) == .timedOut {
            let (skipped, children) = state.withLock { state in
                let skipped = state.waiting
                state.queue.removeAll()
                state.head = 0
                return (skipped, state.children)
            }
            for pid in children { kill(-pid, SIGKILL) }
            log.warning("stopping with \(children.count) hook(s) killed and \(skipped) never run")
        }
        let dropped = state.withLock { $0.dropped }
        if dropped > 0 { log.warning("\(dropped) hook(s) were dropped because the hook queue was full") }
    }

    /// Hooks dropped so far because the queue was full.
    var droppedCount: Int { state.withLock { $0.dropped } }

    private func takeNext() -> ItemOutcomeEvent? {
        state.withLock { state in
            guard state.head < state.queue.count else {
                state.running -= 1
                state.queue.removeAll(keepingCapacity: true)
                state.head = 0
                return nil
            }
            let event = state.queue[state.head]
            state.head += 1
            if state.head >= 256, state.head * 2 >= state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            return event
        }
    }

    private func command(for kind: ItemOutcomeEvent.Kind) -> String? {
        kind == .uploaded ? commands.onSuccess : commands.onFailure
    }

    private func label(_ kind: ItemOutcomeEvent.Kind) -> String { kind == .uploaded ? "on-success" : "on-failure" }

    func environment(for event: ItemOutcomeEvent) -> [String] {
        baseEnvironment + [
            "SPOOLD_ID=\(event.id.rawValue)",
            "SPOOLD_NAME=\(event.originalName)",
            "SPOOLD_STATUS=\(event.httpStatus.map(String.init) ?? "")",
            "SPOOLD_SIZE=\(event.size)",
            "SPOOLD_SPOOL=\(spoolPath)",
            "SPOOLD_REASON=\(event.reason ?? "")",
        ]
    }

    /// Runs one hook to its end or its timeout, on a worker thread.
    private func run(_ event: ItemOutcomeEvent) {
        guard let command = command(for: event.kind) else { return }
        let name = "\(label(event.kind)) hook for \(event.id)"
        let child: ChildProcess
        do {
            child = try ChildProcess.spawnShell(command, environment: environment(for: event), quiet: false)
        } catch {
            log.warning("\(name) could not start: \(error)")
            return
        }
        state.withLock { _ = $0.children.insert(child.pid) }
        if !child.waitForExit(seconds: commands.timeoutSeconds) {
            log.warning("\(name) still running after \(formatSeconds(commands.timeoutSeconds)) (--hook-timeout): sending SIGTERM to its process group")
            child.signalGroup(SIGTERM)
            if !child.waitForExit(seconds: commands.killGraceSeconds) {
                log.warning("\(name) ignored SIGTERM for \(formatSeconds(commands.killGraceSeconds)): sending SIGKILL")
                child.signalGroup(SIGKILL)
            }
        }
        let termination = child.wait()
        state.withLock { _ = $0.children.remove(child.pid) }
        switch termination {
        case .exited(0):
            log.debug("\(name) succeeded")
        case .exited(let code):
            log.warning("\(name) exited with status \(code); the item is not affected")
        case .signalled(let signal):
            log.warning("\(name) was ended by signal \(signal); the item is not affected")
        }
    }
}
