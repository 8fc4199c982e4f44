/// The states a power cut may leave, from a recorded trace (ALICE's model, Pillai et al., OSDI
/// 2014, as this file system's promises go):
///
/// - What a sync covered before the cut is there: `fsync` of a file its contents so far,
///   `fsync` of a folder its names so far, `syncfs` everything.
/// - Any other change may be there or not, in any combination, with one order kept: a change is
///   there only if the earlier changes it builds on are (the same name in the same folder, the
///   same file's earlier contents). A folder's own name is not among them: a change in a folder
///   whose mkdir was lost is simply out of reach (POSIX: fsync of a folder makes its entries
///   durable, not the folder's name in its parent). So a rename is kept whole or not at
///   all (ext4, xfs: `SplitRenames` is the weaker model where its two halves are kept apart), a
///   file's writes are kept in order up to a point, and names and contents are independent: a
///   name may be kept with none of its file's bytes.
/// - The first write of a file not kept may be partly there: its first half, or its whole
///   length holding garbage (a torn append).
///
/// A crash point is a position in the trace: just before each sync (the most a cut can lose
/// there) and just after each workload event (when a promise begins). Where a point allows more
/// states than the budget, the most telling ones are taken first (nothing kept, everything kept,
/// every name without the new bytes and the other way round, prefixes of the trace, each change
/// alone dropped or kept, each write torn), then seeded random ones.
public struct CrashStates {
    public let base: FileTree
    public let trace: [TraceOp]
    /// For each op, the earlier ops it builds on (direct ones).
    private let dependencies: [[Int]]
    /// For each op, the first position from which a sync (of it, or of something built on it)
    /// covers it: a crash at or after that position keeps it.
    private let keptFrom: [Int]
    /// Whether a rename's two folders are changed apart (both names or neither may be found).
    public let splitRenames: Bool

    /// - Parameter splitRenames: model a file system where a rename between two folders may be
    ///   found in both or in neither (CrashMonkey's finding on some file systems): each folder's
    ///   half is kept with its own folder's sync.
    public init(base: FileTree, trace: [TraceOp], splitRenames: Bool = false) {
        self.base = base
        self.splitRenames = splitRenames
        var ops: [TraceOp] = []
        ops.reserveCapacity(trace.count)
        for op in trace {
            if splitRenames, case .rename(let from?, let fromName, let to, let toName, let inode) = op, from != to {
                ops.append(.rename(fromFolder: nil, fromName: fromName, toFolder: to, toName: toName, inode: inode))
                ops.append(.unlink(folder: from, name: fromName, inode: inode))
            } else {
                ops.append(op)
            }
        }
        self.trace = ops

        var dependencies = [[Int]](repeating: [], count: ops.count)
        var lastAtSlot: [TraceOp.Slot: Int] = [:]
        var lastData: [Int: Int] = [:]
        for (i, op) in ops.enumerated() {
            if op.isNameChange {
                var deps = Set<Int>()
                for slot in op.slots { if let d = lastAtSlot[slot] { deps.insert(d) } }
                dependencies[i] = deps.sorted()
                for slot in op.slots { lastAtSlot[slot] = i }
            } else if let inode = op.dataInode {
                if let d = lastData[inode] { dependencies[i] = [d] }
                lastData[inode] = i
            }
        }
        self.dependencies = dependencies

        // The first sync after each change that covers it.
        var covered = [Int](repeating: Int.max, count: ops.count)
        var uncoveredNames: [Int: Set<Int>] = [:]  // folder → ops
        var uncoveredData: [Int: Set<Int>] = [:]  // inode → ops
        var uncovered = Set<Int>()
        for (i, op) in ops.enumerated() {
            switch op {
            case .syncAll:
                for j in uncovered { covered[j] = i }
                uncovered.removeAll()
                uncoveredNames.removeAll()
                uncoveredData.removeAll()
            case .syncFolder(let folder, _):
                for j in uncoveredNames.removeValue(forKey: folder) ?? [] where covered[j] == Int.max {
                    covered[j] = i
                    uncovered.remove(j)
                }
            case .syncFile(let inode, _):
                for j in uncoveredData.removeValue(forKey: inode) ?? [] {
                    covered[j] = i
                    uncovered.remove(j)
                }
            default:
                if op.isNameChange {
                    for folder in op.folders { uncoveredNames[folder, default: []].insert(i) }
                    uncovered.insert(i)
                } else if let inode = op.dataInode {
                    uncoveredData[inode, default: []].insert(i)
                    uncovered.insert(i)
                }
            }
        }
        // A change something kept builds on is kept too: a covered rename keeps the create of
        // the file it renamed. Dependencies point back, so one pass from the end settles it.
        // (A crash at position p keeps op i when keptFrom[i] < p: the covering sync came before.)
        var keptFrom = covered
        for j in stride(from: ops.count - 1, through: 0, by: -1) where keptFrom[j] != Int.max {
            for d in dependencies[j] { keptFrom[d] = min(keptFrom[d], keptFrom[j]) }
        }
        self.keptFrom = keptFrom
    }

    /// Where a power cut is tried: before every sync (and every sync left out), after every
    /// event, and at the end.
    public var crashPoints: [Int] {
        var points: [Int] = []
        for (i, op) in trace.enumerated() {
            switch op {
            case .syncAll, .syncFolder, .syncFile, .leftOut: points.append(i)
            case .event: points.append(i + 1)
            default: break
            }
        }
        points.append(trace.count)
        var seen = Set<Int>()
        return points.filter { seen.insert($0).inserted }
    }

    /// Where a crash point is, for messages: the sync it comes before, or the event it follows.
    public func describe(_ point: Int) -> String {
        if point < trace.count {
            switch trace[point] {
            case .syncAll(let key), .syncFolder(_, let key), .syncFile(_, let key): return "cut just before \(key)"
            case .leftOut(let key): return "cut where \(key) was left out"
            default: break
            }
        }
        if point > 0, case .event(let event) = trace[point - 1] { return "cut just after \(event)" }
        return point == trace.count ? "cut at the end" : "cut at trace position \(point)"
    }

    /// The events before position `point`: what was promised when the power went.
    public func events(before point: Int) -> [PowerCutEvent] {
        trace[..<point].compactMap { if case .event(let e) = $0 { e } else { nil } }
    }

    /// One state a power cut at a crash point may leave: which of the changes not covered by a
    /// sync are kept, and which writes are torn.
    public struct Choice: Hashable, Sendable {
        public var point: Int
        public var kept: [Int]
        public var torn: [Int: Tear]

        /// For messages: `kept 3 of 7 unsynced changes, 1 torn write`.
        public func summary(of states: CrashStates) -> String {
            let free = states.unsynced(at: point).count
            return "cut at trace position \(point): kept \(kept.count) of \(free) unsynced change(s)"
                + (torn.isEmpty ? "" : ", \(torn.count) torn write(s)")
        }
    }

    /// The changes before `point` that no sync before it covers.
    public func unsynced(at point: Int) -> [Int] {
        (0..<point).filter { (trace[$0].isNameChange || trace[$0].dataInode != nil) && keptFrom[$0] >= point }
    }

    /// The tree with exactly what a sync before `point` covered.
    public func durableTree(at point: Int) -> FileTree {
        var tree = base
        for i in 0..<point where keptFrom[i] < point { trace[i].apply(to: &tree) }
        return tree
    }

    /// The tree a power cut leaves in `choice`, built on `durable` (`durableTree(at:)`).
    public func tree(_ choice: Choice, durable: FileTree) -> FileTree {
        var tree = durable
        var next = choice.kept.makeIterator()
        var keep = next.next()
        for i in 0..<choice.point {
            if i == keep {
                trace[i].apply(to: &tree)
                keep = next.next()
            } else if let tear = choice.torn[i] {
                trace[i].apply(to: &tree, tear: tear)
            }
        }
        return tree
    }

    /// Up to `limit` choices at `point`: all of them when there are no more, else the most
    /// telling ones first, then random ones from `random`. Returns them with the number of
    /// states allowed there (counted up to `limit + 1`: more means the choice was bounded).
    public func choices(at point: Int, limit: Int, random: inout SeededRandom) -> (choices: [Choice], bounded: Bool) {
        let free = unsynced(at: point)
        let freeSet = Set(free)
        let freeDeps: [Int: [Int]] = Dictionary(uniqueKeysWithValues: free.map { ($0, dependencies[$0].filter(freeSet.contains)) })
        var result: [Choice] = []
        var seen = Set<Choice>()
        var cut = false
        func add(_ kept: Set<Int>, torn: [Int: Tear] = [:]) {
            let choice = Choice(point: point, kept: kept.sorted(), torn: torn)
            guard !seen.contains(choice) else { return }
            guard result.count < limit else { cut = true; return }
            seen.insert(choice)
            result.append(choice)
        }
        /// The closed set nearest `wanted`: a change is kept only with what it builds on.
        func closed(_ wanted: (Int) -> Bool) -> Set<Int> {
            var kept = Set<Int>()
            for i in free where wanted(i) && freeDeps[i]!.allSatisfy(kept.contains) { kept.insert(i) }
            return kept
        }
        /// Writes that could be torn on top of `kept`: the next write of a file not kept.
        func tearable(_ kept: Set<Int>) -> [Int] {
            free.filter { i in
                guard !kept.contains(i), case .write(_, _, let bytes) = trace[i], bytes.count > 1 else { return false }
                return freeDeps[i]!.allSatisfy(kept.contains)
            }
        }
        func tears(of i: Int, seed: UInt64) -> [Tear] {
            guard case .write(_, _, let bytes) = trace[i] else { return [] }
            return [.prefix(bytes.count / 2), .garbage(seed)]
        }

        // Small enough: every closed set, and each with each single torn write.
        var all: [Set<Int>] = []
        var tooMany = false
        func enumerate(_ k: Int, _ kept: Set<Int>) {
            guard !tooMany else { return }
            if k == free.count {
                all.append(kept)
                if all.count > limit { tooMany = true }
                return
            }
            let i = free[k]
            enumerate(k + 1, kept)
            if freeDeps[i]!.allSatisfy(kept.contains) {
                var with = kept
                with.insert(i)
                enumerate(k + 1, with)
            }
        }
        enumerate(0, [])
        if !tooMany {
            for kept in all { add(kept) }
            for kept in all {
                for i in tearable(kept) { for tear in tears(of: i, seed: UInt64(point * 7919 + i)) { add(kept, torn: [i: tear]) } }
            }
            return (result, cut)
        }

        // Too many: the telling ones first (nothing kept, everything, every name without any
        // file's new bytes, every file's bytes without any new name), then prefixes and single
        // changes in a seeded order, then random ones.
        add([])
        add(freeSet)
        add(closed { trace[$0].isNameChange })
        add(closed { !trace[$0].isNameChange })
        var order = free
        for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, random.int(in: 0...i)) }
        for i in order {
            guard result.count < limit else { break }
            let prefix = closed { $0 <= i }
            add(prefix)
            add(closed { $0 < i }, torn: tearable(closed { $0 < i }).contains(i) ? [i: tears(of: i, seed: random.next())[0]] : [:])
            var dropped = Set<Int>([i])
            add(closed { j in
                if dropped.contains(j) { return false }
                if freeDeps[j]!.contains(where: dropped.contains) { dropped.insert(j); return false }
                return true
            })
            add(closed { $0 == i || dependsOn($0, i, freeDeps) })
        }
        var attempts = 0
        while result.count < limit && attempts < 4 * limit {
            attempts += 1
            let kept = closed { _ in random.next() % 2 == 0 }
            var torn: [Int: Tear] = [:]
            for i in tearable(kept) where random.next() % 4 == 0 {
                torn[i] = tears(of: i, seed: random.next())[Int(random.next() % 2)]
            }
            add(kept, torn: torn)
        }
        return (result, true)
    }

    /// Whether `i` is among what `j` builds on (so keeping `j` keeps `i`).
    private func dependsOn(_ i: Int, _ j: Int, _ freeDeps: [Int: [Int]]) -> Bool {
        var stack = freeDeps[j] ?? []
        var seen = Set<Int>()
        while let d = stack.popLast() {
            if d == i { return true }
            if seen.insert(d).inserted { stack += freeDeps[d] ?? [] }
        }
        return false
    }
}
