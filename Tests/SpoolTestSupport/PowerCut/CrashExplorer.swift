import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem

/// A workload for the explorer: real spool and engine code driven through a `PowerCutRun`.
/// Adding one is adding a value of this type (see `PowerCutWorkloads`): the explorer records
/// it, cuts the power at every crash point, and checks every state it may leave.
public struct PowerCutWorkload {
    public var name: String
    /// The daemon that starts after the cut (recovery's retry budgets, `--no-direct`...).
    public var configuration: EngineConfiguration
    /// Builds the spool the workload starts from, before recording (all of it durable).
    public var prepare: (PowerCutRun) throws -> Void
    public var run: (PowerCutRun) throws -> Void

    public init(
        _ name: String, configuration: EngineConfiguration, prepare: @escaping (PowerCutRun) throws -> Void = { _ in },
        run: @escaping (PowerCutRun) throws -> Void
    ) {
        self.name = name
        self.configuration = configuration
        self.prepare = prepare
        self.run = run
    }
}

/// How much the explorer tries: states per crash point (all of them when there are no more),
/// and how many crash states get their own start-up recovery cut in turn.
public struct PowerCutBudget: Sendable {
    public var statesPerCrashPoint: Int
    /// Crash states (those whose recovery has the most to do) whose recovery is recorded and cut.
    public var recoveryCuts: Int
    public var statesPerRecoveryCrashPoint: Int
    public var seed: UInt64

    public init(statesPerCrashPoint: Int = 16, recoveryCuts: Int = 2, statesPerRecoveryCrashPoint: Int = 6, seed: UInt64 = 28) {
        self.statesPerCrashPoint = statesPerCrashPoint
        self.recoveryCuts = recoveryCuts
        self.statesPerRecoveryCrashPoint = statesPerRecoveryCrashPoint
        self.seed = seed
    }
}

/// A state that breaks a promise.
public struct PowerCutViolation: CustomStringConvertible, Sendable {
    public var workload: String
    /// Where the power went, and what was kept.
    public var state: String
    public var problems: [String]
    /// The spool's files in that state, before recovery.
    public var listing: String

    public var description: String {
        "\(workload): \(state)\n  " + problems.joined(separator: "\n  ") + "\n  files before recovery:\n    "
            + listing.split(separator: "\n").joined(separator: "\n    ")
    }
}

/// What exploring one workload found.
public struct PowerCutReport: Sendable {
    public var workload: String
    public var traceLength = 0
    public var crashPoints = 0
    /// Crash points with more states than the budget (sampled there).
    public var boundedCrashPoints = 0
    /// States tried (choices of what the cut kept), and how many distinct spools they made.
    public var choices = 0
    public var states = 0
    /// Crash states whose recovery was cut, and the distinct states those cuts left.
    public var recoveryCuts = 0
    public var recoveryCutStates = 0
    public var violations: [PowerCutViolation] = []
    public var durabilityCalls: [SyncKey: Int] = [:]
    public var seconds = 0.0

    public var summary: String {
        "\(workload): \(states) states (\(choices) tried at \(crashPoints) crash points, \(boundedCrashPoints) sampled), "
            + "recovery cut in \(recoveryCuts): \(recoveryCutStates) states; \(violations.count) violation(s); "
            + String(format: "%.1f s", seconds)
    }
}

/// Records a workload on a `PowerCutFileSystem`, cuts the power at every crash point
/// (`CrashStates`), and for each state a cut may leave starts the daemon twice (start-up
/// recovery, watches, scans) and checks what spoold promised (`PowerCutPromises`), including
/// that the second start changes nothing. Some states' recovery is itself recorded and cut.
public final class CrashExplorer {
    public let budget: PowerCutBudget
    /// Also model file systems that may keep a rename's two halves apart (`CrashStates`).
    public var splitRenames = false
    private let scratch: String
    private var made = 0

    public init(budget: PowerCutBudget = PowerCutBudget()) throws {
        self.budget = budget
        let parent = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        var template = Array("\(parent)/spoold-powercut-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw SystemError("mkdtemp", path: parent, code: errno)
        }
        scratch = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: scratch) }

    private func freshFolder() throws -> String {
        made += 1
        let path = "\(scratch)/\(made)"
        guard mkdir(path, 0o700) == 0 else { throw SystemError("mkdir", path: path, code: errno) }
        return path
    }

    private func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

    /// Records `workload` once (with `leavingOut` not made durable) and returns its trace.
    public func record(_ workload: PowerCutWorkload, leavingOut: SyncKey? = nil) throws -> (PowerCutFileSystem, Timestamp) {
        let folder = try freshFolder()
        let spoolPath = folder + "/spool"
        let outside = folder + "/outside"
        guard mkdir(spoolPath, 0o700) == 0, mkdir(outside, 0o700) == 0 else { throw SystemError("mkdir", path: folder, code: errno) }
        let clock = ManualClock()
        do {
            // The starting spool, made through a file system whose trace is thrown away.
            let setup = PowerCutRun(
                fs: try PowerCutFileSystem(rootPath: spoolPath), spoolPath: spoolPath, outsidePath: outside, name: workload.name,
                clock: clock)
            try workload.prepare(setup)
            try setup.spool?.drainRemovals()
        }
        let fs = try PowerCutFileSystem(rootPath: spoolPath)
        fs.leftOut = leavingOut
        do {
            let run = PowerCutRun(fs: fs, spoolPath: spoolPath, outsidePath: outside, name: workload.name, clock: clock)
            try workload.run(run)
            try run.spool?.drainRemovals()
        }
        guard fs.modelProblems.isEmpty else {
            throw ExplorerError("\(workload.name): the trace cannot be trusted: \(fs.modelProblems.joined(separator: "; "))")
        }
        remove(folder)
        return (fs, clock.now().adding(seconds: 3600))
    }

    /// Explores `workload`: every crash point, its states within the budget, each recovered twice
    /// and checked. With `leavingOut`, that durability call is not made; `stopAtFirst` ends the
    /// exploration at the first state that breaks a promise.
    public func explore(_ workload: PowerCutWorkload, leavingOut: SyncKey? = nil, stopAtFirst: Bool = false) throws
        -> PowerCutReport
    {
        let started = Date()
        var report = PowerCutReport(workload: workload.name)
        let (fs, recoveryTime) = try record(workload, leavingOut: leavingOut)
        report.durabilityCalls = fs.durabilityCalls
        let states = CrashStates(base: fs.base, trace: fs.trace, splitRenames: splitRenames)
        report.traceLength = states.trace.count
        var random = SeededRandom(state: budget.seed)
        var recovered: [Int: Recovery] = [:]
        /// Distinct states with what was promised at their first crash point, for recovery cuts.
        var candidates: [(tree: FileTree, promises: PowerCutPromises, state: String, work: Int)] = []
        let points = states.crashPoints
        report.crashPoints = points.count
        explore: for point in points {
            let promises = PowerCutPromises(states.events(before: point))
            let durable = states.durableTree(at: point)
            let (choices, bounded) = states.choices(at: point, limit: budget.statesPerCrashPoint, random: &random)
            if bounded { report.boundedCrashPoints += 1 }
            for choice in choices {
                report.choices += 1
                let tree = states.tree(choice, durable: durable)
                let key = tree.fingerprint
                let outcome: Recovery
                if let known = recovered[key] {
                    outcome = known
                } else {
                    outcome = recover(tree, configuration: workload.configuration, now: recoveryTime, fs: nil)
                    recovered[key] = outcome
                    report.states += 1
                    let where_ = "\(states.describe(point)); \(choice.summary(of: states))"
                    if case .recovered(_, let work) = outcome { candidates.append((tree, promises, where_, work)) }
                }
                let problems = outcome.problems(against: promises)
                if !problems.isEmpty {
                    report.violations.append(PowerCutViolation(
                        workload: workload.name, state: "\(states.describe(point)); \(choice.summary(of: states))",
                        problems: problems, listing: tree.listing))
                    if stopAtFirst { break explore }
                }
            }
        }
        if !(stopAtFirst && !report.violations.isEmpty) {
            try cutRecoveries(of: candidates, workload: workload, leavingOut: leavingOut, now: recoveryTime, stopAtFirst: stopAtFirst,
                              random: &random, report: &report)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Records start-up recovery on the states with the most to repair and cuts it at every
    /// crash point: recovery must survive its own power cut.
    private func cutRecoveries(
        of candidates: [(tree: FileTree, promises: PowerCutPromises, state: String, work: Int)], workload: PowerCutWorkload,
        leavingOut: SyncKey?, now: Timestamp, stopAtFirst: Bool, random: inout SeededRandom, report: inout PowerCutReport
    ) throws {
        var ranked = candidates.enumerated().map { ($0.element, random.next()) }
        ranked.sort { ($0.0.work, $0.1) > ($1.0.work, $1.1) }
        var seen = Set<Int>()
        for (candidate, _) in ranked.prefix(budget.recoveryCuts) {
            report.recoveryCuts += 1
            let folder = try freshFolder()
            try candidate.tree.materialize(at: folder)
            let fs = try PowerCutFileSystem(rootPath: folder)
            fs.leftOut = leavingOut
            do {
                try startDaemon(at: folder, fs: fs, configuration: workload.configuration, now: now)
            } catch {
                report.violations.append(PowerCutViolation(
                    workload: workload.name, state: candidate.state, problems: ["the daemon does not start: \(error)"],
                    listing: candidate.tree.listing))
            }
            remove(folder)
            for (call, count) in fs.durabilityCalls { report.durabilityCalls[call, default: 0] += count }
            let states = CrashStates(base: fs.base, trace: fs.trace, splitRenames: splitRenames)
            for point in states.crashPoints {
                let durable = states.durableTree(at: point)
                for choice in states.choices(at: point, limit: budget.statesPerRecoveryCrashPoint, random: &random).choices {
                    let tree = states.tree(choice, durable: durable)
                    guard seen.insert(tree.fingerprint).inserted else { continue }
                    report.recoveryCutStates += 1
                    let problems = recover(tree, configuration: workload.configuration, now: now.adding(seconds: 60), fs: nil)
                        .problems(against: candidate.promises)
                    if !problems.isEmpty {
                        report.violations.append(PowerCutViolation(
                            workload: workload.name,
                            state: "\(candidate.state), then a cut during its recovery \(states.describe(point)); \(choice.summary(of: states))",
                            problems: problems, listing: tree.listing))
                        if stopAtFirst { return }
                    }
                }
            }
        }
    }

    /// What starting the daemon twice on a state did.
    enum Recovery {
        /// The spool after the second start, and how much the first one changed (files added,
        /// removed or changed).
        case recovered(FileTree, work: Int)
        case failed(String)

        func problems(against promises: PowerCutPromises) -> [String] {
            switch self {
            case .failed(let reason): [reason]
            case .recovered(let tree, _): promises.broken(by: tree)
            }
        }
    }

    /// Writes `tree` out, starts the daemon on it twice, and reads what is left.
    private func recover(_ tree: FileTree, configuration: EngineConfiguration, now: Timestamp, fs: (any FileSystem)?) -> Recovery {
        let folder: String
        do {
            folder = try freshFolder()
            try tree.materialize(at: folder)
        } catch {
            return .failed("the state could not be written out: \(error)")
        }
        defer { remove(folder) }
        do {
            try startDaemon(at: folder, fs: fs ?? UnsyncedFileSystem(), configuration: configuration, now: now)
        } catch {
            return .failed("the daemon does not start: \(error)")
        }
        let names = PowerCutFileSystem.attributeNames
        guard let first = try? FileTree.read(folder, attributeNames: names).0 else { return .failed("the recovered spool cannot be read") }
        do {
            try startDaemon(at: folder, fs: UnsyncedFileSystem(), configuration: configuration, now: now.adding(seconds: 1))
        } catch {
            return .failed("the daemon does not start a second time: \(error)")
        }
        guard let second = try? FileTree.read(folder, attributeNames: names).0 else { return .failed("the recovered spool cannot be read") }
        if first.fingerprint != second.fingerprint {
            let before = Set(first.listing.split(separator: "\n")), after = Set(second.listing.split(separator: "\n"))
            return .failed("a second start changed what the first recovery left: -\(before.subtracting(after).sorted()) +\(after.subtracting(before).sorted())")
        }
        let work = Set(tree.listing.split(separator: "\n")).symmetricDifference(first.listing.split(separator: "\n")).count
        return .recovered(second, work: work)
    }

    /// The daemon's start (`Engine.start`: recovery, watches, scans of incoming/ and pending/) and
    /// its finish, with nothing sent.
    private func startDaemon(at path: String, fs: any FileSystem, configuration: EngineConfiguration, now: Timestamp) throws {
        let spool = try Spool(path: path, fs: fs)
        let clock = ManualClock(now)
        let engine = try Engine(
            spool: spool, transport: ScriptedTransport(clock: clock), clock: clock, configuration: configuration,
            log: EventLog(minimumLevel: .error, clock: { clock.now() }), processTag: 9, events: try ScriptedEventSource())
        try engine.start()
        _ = try engine.finish()
    }

    struct ExplorerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// The real file system without its syncs: the states recovery works on are scratch.
struct UnsyncedFileSystem: FileSystem {
    private let real = PosixFileSystem()
    func open(_ name: String, relativeTo directory: FileDescriptor?, flags: OpenFlags, mode: UInt32) throws -> FileDescriptor {
        try real.open(name, relativeTo: directory, flags: flags, mode: mode)
    }
    func close(_ fd: FileDescriptor) { real.close(fd) }
    func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try real.read(fd, into: buffer) }
    func write(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws -> Int { try real.write(fd, from: buffer) }
    func sync(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {}
    func syncFileSystem(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {}
    func rename(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor) throws {
        try real.rename(from, in: fromDirectory, to: to, in: toDirectory)
    }
    func remove(_ name: String, in directory: FileDescriptor, isDirectory: Bool) throws {
        try real.remove(name, in: directory, isDirectory: isDirectory)
    }
    func renameNoReplace(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor) throws {
        try real.renameNoReplace(from, in: fromDirectory, to: to, in: toDirectory)
    }
    func setAttribute(_ name: String, _ value: [UInt8], of fd: FileDescriptor) throws { try real.setAttribute(name, value, of: fd) }
    func attribute(_ name: String, of fd: FileDescriptor, limit: Int) throws -> [UInt8]? { try real.attribute(name, of: fd, limit: limit) }
    func makeDirectory(_ name: String, in directory: FileDescriptor?, mode: UInt32) throws {
        try real.makeDirectory(name, in: directory, mode: mode)
    }
    func status(of fd: FileDescriptor) throws -> FileStatus { try real.status(of: fd) }
    func status(of name: String, in directory: FileDescriptor) throws -> FileStatus { try real.status(of: name, in: directory) }
    func list(_ directory: FileDescriptor) throws -> [DirectoryEntry] { try real.list(directory) }
    func setModificationTime(_ fd: FileDescriptor, milliseconds: Int64) throws { try real.setModificationTime(fd, milliseconds: milliseconds) }
    func lock(_ fd: FileDescriptor, exclusive: Bool, wait: Bool) throws -> Bool { try real.lock(fd, exclusive: exclusive, wait: wait) }
    func unlock(_ fd: FileDescriptor) throws { try real.unlock(fd) }
    func truncate(_ fd: FileDescriptor, to length: Int64) throws { try real.truncate(fd, to: length) }
    func seekToEnd(_ fd: FileDescriptor) throws -> Int64 { try real.seekToEnd(fd) }
    func writerCheck(_ name: String, in directory: FileDescriptor) throws -> WriterCheck { try real.writerCheck(name, in: directory) }
    func allocate(_ fd: FileDescriptor, length: Int64) throws { try real.allocate(fd, length: length) }
}
