import Foundation
import SpoolSystem
import SpoolTestSupport
import XCTest

/// Power cuts, not just kill -9: every workload recorded on a `PowerCutFileSystem`, cut at every
/// crash point, each state it may leave recovered twice and checked (`CrashExplorer`).
final class PowerCutTests: XCTestCase {
    /// The suite's budget, or a larger one from `scripts/powercut` (`POWERCUT_STATES`,
    /// `POWERCUT_RECOVERY_CUTS`, `POWERCUT_SEED`).
    static var budget: PowerCutBudget {
        let environment = ProcessInfo.processInfo.environment
        var budget = PowerCutBudget()
        if let states = environment["POWERCUT_STATES"].flatMap(Int.init) { budget.statesPerCrashPoint = states }
        if let cuts = environment["POWERCUT_RECOVERY_CUTS"].flatMap(Int.init) { budget.recoveryCuts = cuts }
        if let seed = environment["POWERCUT_SEED"].flatMap(UInt64.init) { budget.seed = seed }
        return budget
    }

    func testEveryWorkload_everyCrashState_keepsEveryPromise() throws {
        let environment = ProcessInfo.processInfo.environment
        let explorer = try CrashExplorer(budget: Self.budget)
        // `scripts/powercut --split-renames`: a weaker file system, reported, not asserted.
        explorer.splitRenames = environment["POWERCUT_SPLIT_RENAMES"] != nil
        let only = environment["POWERCUT_ONLY"]
        var states = 0, choices = 0, cut = 0
        for workload in PowerCutWorkloads.all where only == nil || workload.name.contains(only!) {
            let report = try explorer.explore(workload)
            print("power cut: \(report.summary)")
            states += report.states
            choices += report.choices
            cut += report.recoveryCutStates
            for violation in report.violations.prefix(explorer.splitRenames ? 1 : 3) { print(violation) }
            if !explorer.splitRenames { XCTAssertEqual(report.violations.count, 0, workload.name) }
        }
        print("power cut: \(states) states (\(choices) tried) and \(cut) states of cut recoveries, seed \(Self.budget.seed)")
    }
}

/// The explorer proves itself: each durability call left out, in turn, must let some explored
/// state break a promise, or be listed in `notNeeded` with the reason no state needs it.
extension PowerCutTests {
    /// A durability call, as the source names it: file, the function it is in, the text of its
    /// line, what it syncs.
    struct Call: Hashable {
        var file: String
        var function: String
        var text: String
        var target: String
    }

    /// Durability calls no explored state needs, with why (docs/guarantees.md "Crash safety" lists them).
    /// The suite skips them; `scripts/powercut` leaves each out again, says whether that still
    /// holds, and whether the call as a whole (every folder it syncs) is needed.
    static let notNeeded: [Call: String] = {
        let foldersOfACommit = "return commit.batch.wholeFileSystem ? syncingFileSystem() : syncingFolders(dirty)"
        let compactionFolders = "try syncFolders(Set(SpoolFolder.allCases))"
        let recoveryFolders = "try syncFolders(Set(SpoolFolder.allCases))"
        let quarantineFolders = "try syncFolders([.tmp, fromFolder, toFolder])"
        let oneChange = "a rename is one change to both its folders: the fsync of the other folder of the same renames makes them durable (the call as a whole is needed)"
        var list: [Call: String] = [
            Call(file: "SpoolStore/IndexFile.swift", function: "compact", text: "try fs.sync(fresh, label: tmpName)", target: "file"):
                "compaction's new index holds the header alone: empty or torn, it reads as a fresh index",
            Call(file: "SpoolStore/IndexFile.swift", function: "writeHeader", text: "try fs.sync(file, label: SpoolFolder.indexFileName)", target: "file"):
                "the header of a fresh index: empty or torn, it reads as a fresh index",
            Call(file: "SpoolStore/Spool.swift", function: "addUnguarded", text: "try index.append(", target: "file"):
                "an add needs no record: its json, fsynced in tmp/ before any rename, completes the item wherever the cut leaves it",
            Call(file: "SpoolStore/Spool.swift", function: "quarantineUnguarded", text: "try index.append([IndexRecord(.fail, id, from: from, to: to)])", target: "file"):
                "a quarantine (a json whose blob is gone) that is lost is done again by the next start",
            Call(file: "SpoolStore/Spool.swift", function: "addUnguarded", text: "for subfolder in dirtySubfolders.values { try fs.sync(subfolder, label: \"\\(path)/incoming/...\") }", target: "incoming/cam7"):
                "a rename out of a subfolder of incoming/ is one change to both folders: pending/'s fsync, the line before, makes it durable",
            Call(file: "SpoolStore/Spool.swift", function: "addUnguarded", text: "try syncFolders(dirty)", target: "incoming"): oneChange,
            Call(file: "SpoolStore/Spool.swift", function: "addUnguarded", text: "try syncFolders(dirty)", target: "tmp"): oneChange,
        ]
        for folder in ["pending", "inflight", "failed", "tmp"] {
            list[Call(file: "SpoolStore/Spool.swift", function: "continueCommit", text: foldersOfACommit, target: folder)] = oneChange
        }
        for folder in ["pending", "failed", "done", "tmp", "incoming"] {
            list[Call(file: "SpoolStore/Spool.swift", function: "compactIndex", text: compactionFolders, target: folder)] =
                "compaction drops the records of claims and successes, whose renames and removals all touch inflight/: its fsync covers them"
        }
        for folder in ["pending", "failed", "tmp"] {
            list[Call(file: "SpoolStore/Spool.swift", function: "quarantineUnguarded", text: quarantineFolders, target: folder)] =
                "a quarantine (a json whose blob is gone) that is lost is done again by the next start"
        }
        list[Call(file: "SpoolStore/AbortLog.swift", function: "tidy", text: "try folder.syncFolder()", target: "parts")] =
            "recovery's rewrite of aborts.log replaces it by a rename: one a cut loses leaves the old log, which owes the same aborts"
        let setAside = "setting aside is a rename, kept whole or not at all: one a cut loses leaves the entry where it was, to be set aside again by the next start; nothing is lost either way"
        list[Call(file: "SpoolStore/IndexFile.swift", function: "openAndRecover", text: "try fs.sync(file, label: SpoolFolder.indexFileName)", target: "file")] =
            "a torn tail a cut brings back is cut again by the next start (and recovery's compaction replaces the file anyway)"
        list[Call(file: "SpoolStore/IndexFile.swift", function: "setAside", text: "try fs.sync(root, label: \"spool directory\")", target: "SPOOL")] = setAside
        list[Call(file: "SpoolStore/Spool.swift", function: "setAside", text: "try fs.sync(corrupt, label: \"\\(path)/\\(corruptName)\")", target: "corrupt")] = setAside
        for folder in ["pending", "inflight", "failed", "done", "tmp"] {
            list[Call(file: "SpoolStore/Spool.swift", function: "setAside", text: "try fs.sync(descriptor(folder), label: \"\\(path)/\\(folder.rawValue)\")", target: folder)] = setAside
        }
        for folder in ["pending", "inflight", "failed", "done", "tmp", "incoming"] {
            list[Call(file: "SpoolStore/Spool+Recovery.swift", function: "perform", text: recoveryFolders, target: folder)] =
                "recovery's compaction, later in the same start, syncs every folder before it drops the records the repairs were planned from; a cut before it plans them again"
        }
        return list
    }()

    /// The package's root, from this file's path.
    static let packageRoot: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// The text of `site`'s line in `Sources/`, and the name of the function it is in.
    static func source(of site: SourceLocation) -> (function: String, text: String) {
        guard let source = try? String(contentsOfFile: "\(packageRoot)/Sources/\(site.file)", encoding: .utf8) else { return ("?", "?") }
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let index = Int(site.line) - 1
        guard lines.indices.contains(index) else { return ("?", "?") }
        var function = "?"
        for line in lines[...index].reversed() {
            guard let range = line.range(of: "func ") else { continue }
            function = String(line[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
            break
        }
        return (function, lines[index].trimmingCharacters(in: .whitespaces))
    }

    static func call(_ key: SyncKey) -> Call {
        let (function, text) = source(of: key.site)
        return Call(file: "\(key.site.file)", function: function, text: text, target: key.target)
    }

    /// The lines of `Sources/SpoolStore` and `Sources/SpoolEngine` that ask for durability (calls of
    /// `sync`, `syncFileSystem` and the store's helpers that pass their caller's line on).
    static func durabilityLines() -> [(file: String, line: Int, text: String)] {
        let asks = ["fs.sync(", "fs.syncFileSystem(", "syncFolders(", "syncFileSystem(", "index.sync(", "syncFolder(", "index.append(",
                    "stageMetadata(", "syncingIndex(", "syncingFileSystem(", "syncingFolders(", "syncingFiles(", "syncingLog(",
                    "appendKeepingOpen("]
        var found: [(String, Int, String)] = []
        for module in ["SpoolStore", "SpoolEngine"] {
            let folder = "\(packageRoot)/Sources/\(module)"
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() where name.hasSuffix(".swift") {
                guard let source = try? String(contentsOfFile: "\(folder)/\(name)", encoding: .utf8) else { continue }
                for (i, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let text = line.trimmingCharacters(in: .whitespaces)
                    guard asks.contains(where: text.contains), !text.hasPrefix("//"), !text.contains("func "),
                          !text.contains("at: SourceLocation("), !text.contains("at: site"), !text.contains("file: file, line: line"),
                          !text.contains("keepOpen: true"), !text.contains("sync: false")
                    else { continue }
                    found.append(("\(module)/\(name)", i + 1, text))
                }
            }
        }
        return found
    }

    func testEveryDurabilityCall_leftOut_breaksAPromiseInSomeState_unlessListedAsNotNeeded() throws {
        let environment = ProcessInfo.processInfo.environment
        let full = environment["POWERCUT_FULL"] != nil
        // Each call left out is explored at the suite's budget (`POWERCUT_MUTATION_STATES` to change).
        var budget = PowerCutBudget()
        if let states = environment["POWERCUT_MUTATION_STATES"].flatMap(Int.init) { budget.statesPerCrashPoint = states }
        let explorer = try CrashExplorer(budget: budget)
        // Each call with the workloads that make it, those that make it most first (they are
        // likeliest to depend on it).
        var calls: [SyncKey: [(workload: PowerCutWorkload, count: Int)]] = [:]
        for workload in PowerCutWorkloads.all {
            let (fs, _) = try explorer.record(workload)
            for (key, count) in fs.durabilityCalls where ["SpoolStore/", "SpoolEngine/"].contains(where: "\(key.site.file)".hasPrefix) {
                calls[key, default: []].append((workload, count))
            }
        }
        let hitBy = calls.mapValues { $0.sorted { $0.count > $1.count }.map(\.workload) }
        let reached = Set(hitBy.keys.map { "\($0.site.file):\($0.site.line)" })
        for (file, line, text) in Self.durabilityLines() where !reached.contains("\(file):\(line)") {
            print("power cut: NOT REACHED by any workload: \(file):\(line) `\(text)`")
        }
        let only = environment["POWERCUT_CALL"]  // `Spool.swift:291`: just that call
        for key in hitBy.keys.sorted() where only == nil || "\(key)".contains(only!) {
            let call = Self.call(key)
            let listed = Self.notNeeded[call]
            guard listed == nil || full else { continue }
            var caught: PowerCutViolation?
            for workload in hitBy[key]! {
                if let first = try explorer.explore(workload, leavingOut: key, stopAtFirst: true).violations.first {
                    caught = first
                    break
                }
            }
            if let caught {
                print("power cut: CAUGHT without \(key) `\(call.text)`: \(caught.workload): \(caught.state): \(caught.problems[0])")
                if listed != nil { print("power cut:   (listed as not needed: take it off the list)") }
                continue
            }
            // One folder's fsync may cover another's renames (a rename is one change to both):
            // then the call as a whole is what is needed.
            var whole = ""
            if key.target != "file" && key.target != "syncfs" {
                let all = SyncKey(site: key.site, target: "*")
                for workload in hitBy[key]! {
                    if let first = try explorer.explore(workload, leavingOut: all, stopAtFirst: true).violations.first {
                        whole = "; the call as a whole is needed: \(first.workload): \(first.problems[0])"
                        break
                    }
                }
            }
            print("power cut: NOT NEEDED \(key) `\(call.text)` (\(hitBy[key]!.count) workload(s))\(whole)")
            if listed == nil {
                XCTFail("""
                    leaving out \(key) `\(call.text)` breaks no promise in any explored state: add the workload or the \
                    promise that needs it, or list it in PowerCutTests.notNeeded with the reason
                    """)
            }
        }
    }
}
