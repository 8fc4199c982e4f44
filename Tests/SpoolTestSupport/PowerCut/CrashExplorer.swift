import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem

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
            throw SystemError.last("mkdtemp", path: parent)
        }
        scratch = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: scratch) }

    private func freshFolder() throws -> String {
        made += 1
        let path = "\(scratch)/\(made)"
        guard mkdir(path, 0o700) == 0 else { throw SystemError.last(.mkdir, path: path) }
        return path
    }

    private func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

    /// Records `workload` once (with `leavingOut` not made durable) and returns its trace.
    public func record(_ workload: PowerCutWorkload, leavingOut: SyncKey? = nil) throws -> (PowerCutFileSystem, Timestamp) {
        let folder = try freshFolder()
        let spoolPath = folder + "/spool"
        let outside = folder + "/outside"
        guard mkdir(spoolPath, 0o700) == 0, mkdir(outside, 0o700) == 0 else { throw SystemError.last(.mkdir, path: folder) }
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
        if !first.holdsTheSame(as: second) {
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
