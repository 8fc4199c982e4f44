import ArgumentKit
import Dispatch
import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import Synchronization

/// `spoold check [--repair]`: verifies the spool against the index and reports what start-up
/// recovery would do, plus damage recovery leaves to the daemon or the operator.
struct CheckCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "check",
        abstract: "Verify the spool against the index; report (or --repair) what recovery would fix.",
        discussion: """
        Reports what start-up recovery would do (split pairs, leftovers of recorded successes,
        orphans in tmp/, a torn or damaged index, folders or other non-files where item files or
        index.wal belong, which recovery sets aside in corrupt/), items in inflight/ while no daemon runs,
        unreadable or malformed .json files, blobs whose size differs from their .json, and
        names in the state folders that are not items, and S3 multipart uploads spoold gave up but
        has not yet aborted, and tus uploads not yet terminated (SPOOL/parts/aborts.log: the
        daemon sends those requests, and again at each start; --repair does not). Without --repair nothing is changed; while
        a daemon runs, transitions in progress may show up as problems.
        --repair takes the daemon lock and runs the same recovery a daemon start runs, sets the
        names in the state folders that are not items aside in corrupt/ (a daemon leaves them
        alone), then checks again. Malformed items are left for the daemon, which parks them in
        failed/ with the reason when it tries them.
        check reads the spool as a whole recovery does, a slice of ids (about 80,000 files) at a
        time, then every item's json a thousand at a time: its memory stays the same however
        large the spool (a million items: 40 s and 52 MiB here). On a terminal it shows how far
        it is on stderr.
        Exit codes: 0 clean, 1 problems found (after --repair: problems left), 2 usage error,
        3 the spool could not be read or repaired, 4 --repair while a daemon works on the spool.
        """,
        options: [
            CommonOptions.existingSpool,
            .flag("repair", help: "Run start-up recovery now (refused while a daemon runs)."),
        ] + RetryOptions.budgetSpecsForRepair + [
            CommonOptions.json.withHelp("Print JSON instead of text."),
        ],
        positionals: [])

    var spoolPath: String
    var repair: Bool
    var maximumAttempts: Int
    var maximumInterruptedAttempts: Int
    var json: Bool

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        repair = arguments.flag("repair")
        maximumAttempts = try RetryOptions.maximumAttempts.value(in: arguments)
        maximumInterruptedAttempts = try RetryOptions.maximumInterrupted.value(in: arguments)
        json = arguments.flag("json")
    }

    struct Problem {
        var kind: String
        var message: String
        var fix: Fix

        /// What makes a problem go away: recovery (a daemon start or `--repair`), `--repair` alone
        /// (a stray set aside), the daemon trying the item (a malformed one, parked in failed/),
        /// the daemon running (an owed abort, sent when it runs), or the operator.
        enum Fix { case recovery, repair, daemonParks, daemonAborts, byHand }

        init(kind: String, message: String, fix: Fix? = nil) {
            self.kind = kind
            self.message = message
            self.fix = fix ?? {
                switch kind {
                case "stray": .repair
                case "json", "size": .daemonParks
                case "abort": .daemonAborts
                default: .recovery
                }
            }()
        }
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try CommonOptions.openExisting(spoolPath)
        var repaired: [String] = []
        if repair {
            let lock = try SpoolLock(spool: spool)
            spool.mayReleaseReserve = true  // it works as a daemon start would, on a full disk too
            var log = context.log
            log.minimumLevel = .error  // what was done is printed below, once
            let outcome = try SpoolRecovery.run(
                spool: spool, policy: RetryPolicy(maximumAttempts: maximumAttempts, maximumInterruptedAttempts: maximumInterruptedAttempts),
                now: context.clock.now(), log: log)
            repaired = outcome.notes
            if outcome.requeued > 0 { repaired.append("\(outcome.requeued) interrupted upload(s) returned to pending/ (attempts kept)") }
            if outcome.failed > 0 { repaired.append("\(outcome.failed) interrupted upload(s) had used up their attempts: moved to failed/") }
            // A daemon leaves the names that are no item's alone; --repair sets them aside.
            for (stray, aside) in try spool.setStraysAside(now: context.clock.now()) {
                repaired.append("\(stray) is not an item file: set it aside as \(aside)")
            }
            let problems = try Self.problems(in: spool, daemonRuns: false, progress: CheckProgress.onTerminal())
            withExtendedLifetime(lock) {}
            return report(spool, problems: problems, repaired: repaired, context: context)
        }
        let problems = try Self.problems(in: spool, daemonRuns: SpoolLock.holder(of: spool) != nil, progress: CheckProgress.onTerminal())
        return report(spool, problems: problems, repaired: nil, context: context)
    }

    /// Everything wrong with the spool as it is now; changes nothing. Read as a whole recovery
    /// reads it, a slice of ids at a time, then every item's json a batch at a time (two at once):
    /// memory holds a slice or a batch, not the spool. The problems are kept by kind and told in
    /// the same order whatever the slices.
    static func problems(in spool: Spool, daemonRuns: Bool, progress: CheckProgress? = nil) throws -> [Problem] {
        var index: [Problem] = []
        var corrupt: [Problem] = []
        var recovery: [Problem] = []
        var staging: [Problem] = []
        var interrupted: [Problem] = []
        var first = true
        try spool.inspectRecovery(progress: { progress?.show("reading the folders, slice \($0 + 1) of \($1)") }) { inspection in
            if first {
                first = false
                switch inspection.indexDamage {
                case .none: break
                case .tornTail(_, let length):
                    index.append(Problem(kind: "index", message: "index.wal ends in \(length) byte(s) of torn tail; recovery cuts them"))
                case .corruptMiddle(let offset):
                    index.append(Problem(
                        kind: "index",
                        message: "index.wal is damaged at byte \(offset); recovery keeps it aside and rebuilds from the folders"))
                }
                if !inspection.indexIsRegularFile {
                    index.append(Problem(
                        kind: "index",
                        message: "index.wal is not a regular file; recovery sets it aside as index.wal.corrupt-<time> and rebuilds from the folders"))
                }
            }
            for name in inspection.notRegular {
                corrupt.append(Problem(
                    kind: "corrupt",
                    message: "\(name) is not a regular file; recovery sets it aside in \(SpoolFolder.corruptFolderName)/"))
            }
            // A running daemon's direct uploads are lone blobs in inflight/ (`.a1`, no json yet).
            let directUploads: Set<String> = daemonRuns ? Set(inspection.plan.repairs.compactMap {
                if case .recreateMetadata(let id, let location) = $0, location == ItemLocation(.inflight, attempt: 1) { "\(id):" } else { nil }
            }) : []
            for note in inspection.plan.notes where !directUploads.contains(where: { note.hasPrefix($0) }) {
                recovery.append(Problem(kind: "recovery", message: note))
            }
            // A running daemon's spare jsons and backlog runs are its own, in use.
            for name in inspection.tmpStrays
            where !(daemonRuns && (Spool.isSpareJSON(String(name.dropFirst(4))) || Spool.isBacklogRun(String(name.dropFirst(4))))) {
                staging.append(Problem(kind: "recovery", message: "\(name) is not ours to keep; recovery removes it"))
            }
            if !daemonRuns {
                for (id, location) in inspection.interrupted.sorted(by: { $0.key < $1.key }) {
                    interrupted.append(Problem(
                        kind: "inflight",
                        message: "\(id) is in inflight/ (attempt \(location.attempt)) but no daemon runs; recovery returns it to pending/"))
                }
            }
        }
        var problems = index + corrupt + recovery + staging + interrupted
        let abortLog = spool.partLogs.aborts.scan()
        for abort in abortLog.owed where abort.kind == .tusTermination {
            problems.append(Problem(
                kind: "abort",
                message: "tus upload \(abort.uploadID) of \(abort.id) (\(abort.url)) was given up at \(abort.since.iso8601) and is not terminated yet; "
                    + (daemonRuns ? "the daemon sends its termination until the server confirms" : "the next daemon start sends its termination")))
        }
        for abort in abortLog.owed where abort.kind == .s3Multipart {
            problems.append(Problem(
                kind: "abort",
                message: "multipart upload \(abort.uploadID) of \(abort.id) (\(abort.url)) was given up at \(abort.since.iso8601) and is not aborted yet; "
                    + (daemonRuns ? "the daemon sends AbortMultipartUpload until the store confirms" : "the next daemon start sends AbortMultipartUpload")))
        }
        if abortLog.damagedLines > 0 {
            problems.append(Problem(
                kind: "abort",
                message: "parts/\(AbortLog.fileName) has \(abortLog.damagedLines) damaged line(s): an abort recorded there may be lost (read the file; a lifecycle rule removes such uploads)",
                fix: .byHand))
        }
        for stray in try SpoolInventory.strays(in: spool) {
            problems.append(Problem(
                kind: "stray",
                message: "\(stray) is not an item file (<id>.a<N>.json/.blob); the daemon leaves it alone, --repair sets it aside in \(SpoolFolder.corruptFolderName)/"))
        }
        var itemsRead = 0
        try SpoolInventory.forEachBatch(spool, loneBlobs: false) { batch in
            let items = batch.filter(\.hasJSON)
            let readers = Dictionary(uniqueKeysWithValues: ItemState.allCases.map { ($0, spool.reading(SpoolFolder($0))) })
            // The jsons of a batch on two threads: reading them is most of check's time.
            let found = Mutex<[Int: [Problem]]>([:])
            DispatchQueue.concurrentPerform(iterations: 2) { part in
                var local: [Int: [Problem]] = [:]
                for i in stride(from: part, to: items.count, by: 2) {
                    let itemProblems = jsonProblems(of: items[i], reader: readers[items[i].location.state]!)
                    if !itemProblems.isEmpty { local[i] = itemProblems }
                }
                found.withLock { $0.merge(local) { a, _ in a } }
            }
            let byItem = found.withLock { $0 }
            for i in byItem.keys.sorted() { problems += byItem[i]! }
            itemsRead += batch.count
            progress?.show("reading the items' jsons, \(itemsRead) read")
        }
        progress?.done()
        return problems
    }

    /// What is wrong with one item's json: unreadable, naming another item, or saying another size
    /// than its blob has.
    static func jsonProblems(of item: SpoolInventory.Item, reader: FolderReading) -> [Problem] {
        let where_ = "\(SpoolFolder(item.location.state).rawValue)/\(item.id).a\(item.location.attempt).json"
        let metadata: ItemMetadata
        do {
            metadata = try reader.readMetadata(item.id, attempt: item.location.attempt)
        } catch {
            return [Problem(kind: "json", message: "\(where_) cannot be read: \(error)")]
        }
        var problems: [Problem] = []
        if metadata.id != item.id.rawValue {
            problems.append(Problem(kind: "json", message: "\(where_) names another item (\(metadata.id))"))
        }
        if let size = item.blobSize, size != metadata.size {
            problems.append(Problem(
                kind: "size", message: "\(item.id): the blob has \(size) B but the .json says \(metadata.size) B"))
        }
        return problems
    }

    /// The last line: how many problems, and only the remedies that will work for them.
    static func summary(_ problems: [Problem], repaired: Bool) -> String {
        func count(_ fix: Problem.Fix) -> Int { problems.filter { $0.fix == fix }.count }
        let byRecovery = count(.recovery), byRepair = count(.repair)
        var others: [String] = []
        if count(.daemonParks) > 0 { others.append("\(count(.daemonParks)) malformed item(s), which the daemon parks in failed/ when it tries them") }
        if count(.daemonAborts) > 0 { others.append("\(count(.daemonAborts)) multipart upload(s) to abort, which the daemon does when it runs") }
        if count(.byHand) > 0 { others.append("\(count(.byHand)) to look at by hand") }
        if repaired { return "\(problems.count) problem(s) left" + (others.isEmpty ? "" : ": " + others.joined(separator: "; ")) }
        var parts = ["\(problems.count) problem(s)"]
        if byRecovery + byRepair > 0 {
            parts.append("'spoold check --repair' fixes "
                + (byRecovery + byRepair < problems.count ? "\(byRecovery + byRepair)" : problems.count == 1 ? "it" : "them")
                + (byRepair == 0 ? " (starting the daemon does too)" : ""))
        }
        return (parts + others).joined(separator: "; ")
    }

    private func report(_ spool: Spool, problems: [Problem], repaired: [String]?, context: CommandContext) -> ExitCode {
        if json {
            var object: [String: Any] = [
                "spool": spool.path, "clean": problems.isEmpty,
                "problems": problems.map { ["kind": $0.kind, "message": $0.message] },
            ]
            if let repaired { object["repaired"] = repaired }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
                context.print(String(decoding: data, as: UTF8.self))
            }
        } else {
            for line in repaired ?? [] { context.print("repaired: \(line)") }
            for problem in problems { context.print("\(problem.kind): \(problem.message)") }
            if problems.isEmpty {
                context.print("spool \(spool.path) is consistent")
            } else {
                context.print(Self.summary(problems, repaired: repaired != nil))
            }
        }
        return problems.isEmpty ? .success : .partial
    }
}

/// `spoold check`'s progress on a terminal: one line on stderr, redrawn in place at most four
/// times a second, cleared at the end; nothing when stderr is not a terminal (a pipe, a file).
final class CheckProgress {
    private var lastDrawn = 0.0
    private var drawn = false

    /// A progress line when stderr is a terminal, else nil.
    static func onTerminal() -> CheckProgress? { isatty(2) == 1 ? CheckProgress() : nil }

    func show(_ text: String) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let seconds = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        guard !drawn || seconds - lastDrawn >= DrainProgress.minimumRedrawSeconds else { return }
        (lastDrawn, drawn) = (seconds, true)
        FileDescriptor.standardError.write(DrainProgress.redrawPrefix + "check: " + text)
    }

    func done() {
        if drawn { FileDescriptor.standardError.write(DrainProgress.redrawPrefix) }
        drawn = false
    }
}
