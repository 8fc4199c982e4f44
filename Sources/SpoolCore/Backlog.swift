/// Which pending items the daemon holds in memory, and when it reads more from disk: the queue
/// of a spool of any size at a memory bounded by configuration (Postfix's active queue).
///
/// At most `capacity` items are in memory; the rest stay in pending/ and come in when their turn
/// does. They come from two places, both in line order:
/// - the runs of the last pass: a pass reads all of pending/ that is not in memory and writes it
///   sorted (in chunks, merged back on reading); the engine keeps `nextRun` current;
/// - the waiting list: items that reached pending/ while earlier ones waited on disk (taken in
///   during an outage, moved back by an operator) or that memory gave back to make room. Up to
///   `waitingLimit` are kept by entry; past that only their count and the earliest of them are,
///   and a pass must read pending/ again before anything behind that earliest one goes.
///
/// The head of memory is claimed only while nothing on disk is before it (`next`), so items go
/// out in line order across the whole backlog. A pure state machine: the engine reports what
/// happened and performs the step returned.
public struct Backlog: Sendable {
    public enum Step: Equatable, Sendable {
        /// The head of memory is first in line: claim it once due.
        case claim
        /// Read up to this many entries into memory (from the runs and the waiting list, merged).
        case load(Int)
        /// Memory is full and an earlier item waits on disk: give back this many of the latest
        /// pending items in memory (their files stay in pending/; they join the waiting list).
        case evict(Int)
        /// The earliest item is on disk where only a pass can find it: wait for the pass
        /// (`wantsPass` says when to start one).
        case waitForPass
        /// Nothing queued anywhere.
        case idle
    }

    public let capacity: Int
    /// The largest batch moved in or out of memory at once, so a round stays short.
    public let batch: Int
    /// The next entry of the runs (the engine's reader keeps it current); nil when used up.
    public var nextRun: BacklogEntry?
    /// Waiting items known by entry, sorted.
    public private(set) var waitingEntries: [BacklogEntry] = []
    /// Waiting items known only by count (past `waitingLimit`), and the earliest of them.
    public private(set) var uncounted = 0
    public private(set) var earliestUncounted: BacklogEntry?
    /// A pass is under way. `passFloor` is the earliest of what it was started to find: nothing
    /// behind it is claimed until the pass is done.
    public private(set) var passing = false
    private var passFloor: BacklogEntry?

    public var waitingLimit: Int { max(1, capacity / 4) }

    public init(capacity: Int, batch: Int = 1024) {
        precondition(capacity > 0 && batch > 0)
        (self.capacity, self.batch) = (capacity, batch)
    }

    /// Nothing waits on disk outside memory.
    public var isEmpty: Bool { nextRun == nil && waitingEntries.isEmpty && uncounted == 0 && !passing }

    /// Items on disk outside memory that the state knows of (runs not counted).
    public var waitingCount: Int { waitingEntries.count + uncounted }

    /// The earliest place in line of anything on disk outside memory, as far as it is known.
    public var earliestOnDisk: BacklogEntry? {
        [nextRun, waitingEntries.first, earliestUncounted, passFloor].compactMap { $0 }.min()
    }

    /// The next entry to read into memory: the runs' or the waiting list's, whichever is first.
    public var nextToLoad: BacklogEntry? {
        switch (nextRun, waitingEntries.first) {
        case (let run?, let waiting?): min(run, waiting)
        case (let run?, nil): run
        case (nil, let waiting?): waiting
        case (nil, nil): nil
        }
    }

    /// At start, before the first pass: pending/ may hold anything, before anything. Nothing is
    /// claimed until a pass has read it.
    public mutating func unknownOnDisk() {
        uncounted = max(uncounted, 1)
        earliestUncounted = BacklogEntry(
            notBefore: Timestamp(millisecondsSinceEpoch: .min), id: ItemID("00000000T000000000Z-")!, attempt: 0)
    }

    /// A recycled image took its last image's whole line (`RecycleLine.runs`) instead of a pass:
    /// pending/ is known again as that image knew it. The runs read on from `nextRun`; what it
    /// knew only by count waits for a pass, as it would have there. (Its items in memory and its
    /// waiting list come in by entry, as `admit` and `evicted` take them.)
    public mutating func tookHandedLine(nextRun: BacklogEntry?, uncounted: Int, earliestUncounted: BacklogEntry?) {
        precondition(!passing)
        self.nextRun = nextRun
        (self.uncounted, self.earliestUncounted) = (0, nil)
        if uncounted > 0, let earliestUncounted { waitUncounted(uncounted, earliest: earliestUncounted) }
    }

    /// A new item in pending/ (taken in, adopted, retried): whether memory takes it now. It does
    /// when it has room and nothing on disk is before the item; otherwise the item waits.
    public mutating func admit(_ entry: BacklogEntry, inMemory: Int) -> Bool {
        if inMemory < capacity, earliestOnDisk.map({ entry < $0 }) ?? true { return true }
        wait(entry)
        return false
    }

    /// `count` items wait on disk where only a pass can find them, the earliest of them at
    /// `earliest` (those start-up recovery found beyond memory).
    public mutating func waitUncounted(_ count: Int, earliest: BacklogEntry) {
        guard count > 0 else { return }
        uncounted += count
        if earliestUncounted.map({ earliest < $0 }) ?? true { earliestUncounted = earliest }
    }

    /// An item memory gave back (`Step.evict`): it waits on disk.
    public mutating func evicted(_ entry: BacklogEntry) { wait(entry) }

    private mutating func wait(_ entry: BacklogEntry) {
        if waitingEntries.count < waitingLimit {
            let at = insertionIndex(entry)
            if at < waitingEntries.count, waitingEntries[at] == entry { return }
            waitingEntries.insert(entry, at: at)
        } else {
            uncounted += 1
            if earliestUncounted.map({ entry < $0 }) ?? true { earliestUncounted = entry }
        }
    }

    private func insertionIndex(_ entry: BacklogEntry) -> Int {
        var (low, high) = (0, waitingEntries.count)
        while low < high {
            let mid = (low + high) / 2
            if waitingEntries[mid] < entry { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Takes the first waiting entry (when `nextToLoad` is one of them).
    public mutating func takeWaiting() -> BacklogEntry? {
        waitingEntries.isEmpty ? nil : waitingEntries.removeFirst()
    }

    /// Whether `head` (the earliest pending item in memory) is first in line: nothing known on
    /// disk comes before it.
    public func mayClaim(_ head: BacklogEntry) -> Bool { earliestOnDisk.map { head < $0 } ?? true }

    /// What to do before claiming, given the earliest pending item in memory and how many items
    /// memory holds. Memory is kept full of the earliest items in line: what can be read in is
    /// read while there is room.
    public func next(head: BacklogEntry?, inMemory: Int) -> Step {
        if inMemory < capacity, nextToLoad != nil { return .load(min(capacity - inMemory, batch)) }
        if let head, mayClaim(head) { return .claim }
        guard let disk = earliestOnDisk else { return .idle }
        if nextToLoad == disk { return .evict(min(batch, max(1, capacity / 4))) }
        return .waitForPass
    }

    /// Whether to start a pass over pending/ now: items only a pass can find wait on disk, and
    /// either they come first, or everything else on disk is used up while memory runs low.
    public func wantsPass(head: BacklogEntry?, inMemory: Int) -> Bool {
        guard !passing, uncounted > 0 else { return false }
        if next(head: head, inMemory: inMemory) == .waitForPass { return true }
        return nextToLoad == nil && inMemory <= capacity / 2
    }

    /// A pass began: it reads every pending item not in memory. What waited by count is its to
    /// find; until it is done nothing behind the earliest of those is claimed.
    public mutating func passStarted() {
        passing = true
        passFloor = earliestUncounted
        uncounted = 0
        earliestUncounted = nil
    }

    /// The pass found the first entries in line of what it reads (`head`, in line order: nothing
    /// else it finds comes before the last of them), before it wrote its runs: they wait by
    /// entry, to be read in and claimed at once, and the floor rises to the last of them. The
    /// pass must leave them out of its runs. Returns how many were taken: those the waiting list
    /// has room for (the floor stops at the last taken; the pass finds the rest).
    @discardableResult
    public mutating func passFoundHead(_ head: [BacklogEntry]) -> Int {
        guard passing else { return 0 }
        let taken = head.prefix(max(0, waitingLimit - waitingEntries.count))
        guard let last = taken.last else { return 0 }
        for entry in taken { wait(entry) }
        if passFloor.map({ $0 < last }) ?? true { passFloor = last }
        return taken.count
    }

    /// The pass is done; its runs replace the earlier ones (`nextRun`: their first entry). Items
    /// in both the runs and the waiting list, or already in memory, are skipped when read.
    public mutating func passFinished(nextRun: BacklogEntry?) {
        passing = false
        passFloor = nil
        self.nextRun = nextRun
    }

    /// A pass that failed: what it was to find waits again (the next pass looks for it).
    public mutating func passFailed() {
        passing = false
        if let floor = passFloor {
            uncounted += 1
            if earliestUncounted.map({ floor < $0 }) ?? true { earliestUncounted = floor }
        }
        passFloor = nil
    }
}
