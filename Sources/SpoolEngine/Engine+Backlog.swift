import Dispatch
import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem
import Synchronization

/// The queue beyond memory: at most `--queue-memory` items are held in memory (`items`, `due`);
/// the rest wait in pending/ and come in when their turn does (`Backlog` decides, this performs).
/// A pass over pending/ on a thread of its own writes them sorted into runs in tmp/; the engine
/// reads the runs back a batch at a time. So memory and the cost per item stay the same whether
/// a thousand items wait or a million, and items still go out oldest first (then by retry time)
/// across all of them.
extension Engine {
    /// Passes that ended, posted from their thread for the next step.
    final class PassInbox: Sendable {
        private let results = Mutex<[Result<BacklogRuns, any Error>]>([])

        func post(_ result: Result<BacklogRuns, any Error>) { results.withLock { $0.append(result) } }

        func take() -> [Result<BacklogRuns, any Error>] {
            results.withLock { list in
                defer { list.removeAll() }
                return list
            }
        }
    }

    /// Where an item in memory stands in line.
    func backlogEntry(_ id: ItemID, _ lifecycle: ItemLifecycle) -> BacklogEntry {
        BacklogEntry(notBefore: lifecycle.notBefore, id: id, attempt: lifecycle.attemptsMade)
    }

    /// A pending item that just joined the queue (taken in, adopted, recovered): held in memory if
    /// the backlog lets it, else it waits in pending/ until its turn. True when it is in memory.
    @discardableResult
    func admit(_ id: ItemID, _ lifecycle: ItemLifecycle) -> Bool {
        guard backlog.admit(backlogEntry(id, lifecycle), inMemory: items.count) else { return false }
        items[id] = lifecycle
        due.push(.init(notBefore: lifecycle.notBefore, id: id))
        return true
    }

    /// The earliest pending item in memory, after dropping heap entries that went stale.
    func memoryHead() -> BacklogEntry? {
        while let first = due.first {
            if let lifecycle = items[first.id], lifecycle.state == .pending, lifecycle.notBefore == first.notBefore {
                return backlogEntry(first.id, lifecycle)
            }
            _ = due.popFirst()
        }
        return nil
    }

    /// Items waiting in pending/ outside memory, as far as the engine knows (some entries of the
    /// runs are skipped when read: uploaded or moved meanwhile).
    public var queuedOutsideMemory: Int { runsLeft + backlog.waitingCount + passWillFind }

    /// Pending items, in memory and on disk (not counting those in flight).
    public var pendingCount: Int { items.count - uploads.count + queuedOutsideMemory }

    /// Before claims: makes memory hold what comes first in line. Reads the next entries of the
    /// runs and the waiting list in, gives back the latest items when memory is full and an
    /// earlier one waits on disk, and starts a pass when only a pass can find what comes next.
    /// `keep` (items finished in this round, their moves not committed yet) are never given back.
    func feedMemory(now: Timestamp, keep: Set<ItemID> = []) throws {
        takeFinishedPasses(now: now)
        for _ in 0..<8 {
            switch backlog.next(head: memoryHead(), inMemory: items.count) {
            case .load(let count):
                if try load(count) == 0 && backlog.nextToLoad == nil { break }
                continue
            case .evict(let count):
                if evict(count, keep: keep) == 0 { break }
                continue
            case .claim, .waitForPass, .idle:
                break
            }
            break
        }
        startPassIfWanted(now: now)
    }

    /// Reads up to `count` entries in, in line order; returns how many joined memory. An entry
    /// whose item is in memory already, or whose json is no longer where it says (uploaded,
    /// moved by an operator), is skipped: the folders are the truth.
    private func load(_ count: Int) throws -> Int {
        var loaded: [(ItemID, ItemLocation)] = []
        defer { if !loaded.isEmpty { observers.itemsCameIntoMemory(loaded) } }
        for _ in 0..<count {
            guard let entry = backlog.nextToLoad else { break }
            if backlog.waitingEntries.first == entry {
                _ = backlog.takeWaiting()
            } else {
                _ = try backlogReader?.next()
                runsLeft = max(0, runsLeft - 1)
                backlog.nextRun = backlogReader?.peek
                if backlog.nextRun == nil { dropRuns() }
            }
            if let location = bringIntoMemory(entry) { loaded.append((entry.id, location)) }
        }
        return loaded.count
    }

    /// Puts a pending item read from disk into memory, unless it is there already or its json is
    /// no longer in pending/ at its attempt. A tried item stands in line at its json's mtime.
    private func bringIntoMemory(_ entry: BacklogEntry) -> ItemLocation? {
        guard items[entry.id] == nil else { return nil }
        let location = ItemLocation(.pending, attempt: entry.attempt)
        guard let status = try? spool.status(of: ItemFileName(id: entry.id, attempt: entry.attempt, kind: .json), at: location),
              status.type == .regular
        else { return nil }
        let notBefore = entry.attempt == 0 ? entry.notBefore : Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds)
        items[entry.id] = ItemLifecycle(location: location, notBefore: notBefore)
        due.push(.init(notBefore: notBefore, id: entry.id))
        return location
    }

    /// Gives back up to `count` of the latest pending items in memory (their files stay in
    /// pending/; they wait on disk, found again by their entries or the next pass).
    private func evict(_ count: Int, keep: Set<ItemID>) -> Int {
        let latest = items.lazy
            .filter { $0.value.state == .pending && !keep.contains($0.key) }
            .map { self.backlogEntry($0.key, $0.value) }
            .sorted(by: >)
            .prefix(count)
        for entry in latest {
            items[entry.id] = nil
            backlog.evicted(entry)
        }
        observers.itemsLeftMemory(latest.map(\.id))
        return latest.count
    }

    /// Starts a pass over pending/ when the backlog wants one: on the pass worker, with the ids
    /// in memory left out. Its result arrives in `passInbox` and wakes the loop.
    func startPassIfWanted(now: Timestamp) {
        if let retry = passRetryAt, now < retry { return }
        guard backlog.wantsPass(head: memoryHead(), inMemory: items.count) else { return }
        backlog.passStarted()
        passCount += 1
        log.debug("reading pending/ for the items beyond memory (pass \(passCount), \(items.count) in memory)")
        writeRuns(excluding: Set(items.keys))
    }

    /// Writes the runs of the pass under way on the pass worker, leaving out `excluding`; counts
    /// pending/ as well when asked (`census`).
    private func writeRuns(excluding: Set<ItemID>, census: PassCensus? = nil) {
        let (pass, number, inbox, events) = (spool.backlogPass, passCount, passInbox, self.events)
        runPass {
            inbox.post(Result { try pass.run(excluding: excluding, pass: number, census: census) })
            events.wake()
        }
    }

    /// The first pass, begun on the engine's thread at start (`start`): one listing of pending/
    /// finds the first items in line (`BacklogPass.head`, as many as a load takes), which are
    /// read in and claimed at once, and the runs of the rest are written on the pass's thread
    /// meanwhile. So the first upload waits for a listing of names, not for a sort of the whole
    /// queue. A pass that fails is made again by the loop (`passRetryAt`).
    /// A pending/ holding lone or odd files (an operator's mistake, a damaged disk: never
    /// spoold's own doing, whose transitions the index names) has them repaired first by a
    /// recovery of the whole spool, as `spoold check --repair` would, and is read again.
    func readPendingAtStart(now: Timestamp) throws {
        if let line = handedLine {
            handedLine = nil
            return takeHandedLine(line)
        }
        let logged = spool.partLogs.loggedItems()
        let limit = headLimit
        var result = Result { try spool.backlogPass.head(limit: limit, excluding: Set(items.keys), watching: logged) }
        if case .success(let head) = result, head.tally.needsRepair {
            log.info("pending/ holds lone or odd files (\(head.tally.filesSeen)): reading the whole spool to repair them")
            _ = try SpoolRecovery.run(spool: spool, policy: configuration.policy, now: now, log: log, scope: .whole)
            result = Result { try spool.backlogPass.head(limit: limit, excluding: Set(items.keys), watching: logged) }
        }
        backlog.passStarted()
        passCount += 1
        let head: BacklogHead
        switch result {
        case .failure(let error):
            passInbox.post(.failure(error))
            return takeFinishedPasses(now: now)
        case .success(let found):
            head = found
        }
        removeOrphanPartLogs(logged.subtracting(items.keys).subtracting(head.tally.watchedSeen))
        let taken = backlog.passFoundHead(head.entries)
        // The rest of the queue goes into the runs; until they are written it is counted here.
        passWillFind = head.tally.queued - taken
        announceQueue(pendingCount + uploads.count)
        if passWillFind == 0 {
            backlog.passFinished(nextRun: nil)
        } else {
            // The pass lists all of pending/ anyway: what the queue beyond memory takes is counted
            // in the same listing, for the observer that asks (`QueueBytes`), not in one more.
            let census = observers.pendingCensus.map {
                PassCensus(excluding: Set(items.keys), measure: $0, keepsCreationMinutes: true)
            }
            pendingCensusExcluding = census?.excluding
            writeRuns(excluding: Set(items.keys).union(head.entries.prefix(taken).map(\.id)), census: census)
        }
    }

    /// How many of the first items in line a start reads in before the runs of the rest exist:
    /// what the waiting list holds by entry (a quarter of `--queue-memory`, 2,500 by default), at
    /// most what a recycle hands on. Enough to send while the pass writes the runs: with 1,024, a
    /// recycled image at a million queued sent its line in 0.6 s and then waited for its pass
    /// (1.2 s), 1.3-1.5 s lost at each recycle.
    var headLimit: Int { min(backlog.waitingLimit, RecycleLine.maximumHead) }

    /// What a recycle hands to the next image (`resume(from:startedAt:line:)`, made by `finish`
    /// as `lineForNextImage`), and how many items are queued.
    ///
    /// The whole line when no pass is under way and it fits (`RecycleLine.runs`): every pending
    /// item in memory and the waiting list by entry, and the runs, whose descriptors are taken
    /// from this image (left open for the next one; `dropRuns` then only removes their files
    /// from tmp/). Otherwise the first pending items in memory, in line order, up to `headLimit`
    /// and only those nothing on disk comes before (what this image itself could claim next):
    /// the next image's pass finds the rest.
    func handOverLine() -> RecycleLine {
        let pending = items.lazy.filter { $0.value.state == .pending }.map { self.backlogEntry($0.key, $0.value) }
        if !backlog.passing, pending.count + backlog.waitingEntries.count <= RecycleLine.maximumEntries {
            var byID: [ItemID: BacklogEntry] = [:]
            for entry in backlog.waitingEntries { byID[entry.id] = entry }
            for entry in pending { byID[entry.id] = entry }
            let runs = backlogReader?.handOver() ?? []
            backlogReader = nil
            return RecycleLine(
                queued: pendingCount, entries: byID.values.sorted(),
                runs: .init(
                    runs: runs, left: runs.isEmpty ? 0 : runsLeft, uncounted: backlog.uncounted,
                    earliestUncounted: backlog.earliestUncounted))
        }
        let first = pending.filter { self.backlog.mayClaim($0) }.sorted().prefix(headLimit)
        return RecycleLine(queued: pendingCount, entries: Array(first))
    }

    /// A recycled image's start: the line the last image handed on stands in for the start's
    /// listing of pending/. A whole line is taken as it is (`takeWholeLine`). Otherwise its
    /// entries that still name a json in pending/ (an operator may have moved one meanwhile) are
    /// read in and claimed at once, as a listing's head would be; the pass writes the runs of
    /// everything else in pending/ on its own thread, and until it is done the queue is the last
    /// image's count. The checks a first start's listing makes of pending/ (lone files, part logs
    /// of items gone) were made by the first image; an item moved into pending/ by hand in the
    /// instant of the exec is found by the pass.
    private func takeHandedLine(_ line: RecycleLine) {
        if let runs = line.runs {
            if takeWholeLine(line, runs) { return }
            spool.closeHandedRuns(runs.runs)
        }
        let entries = line.entries.prefix(headLimit).filter { entry in
            guard items[entry.id] == nil,
                  let status = try? spool.status(of: ItemFileName(id: entry.id, attempt: entry.attempt, kind: .json), at: ItemLocation(.pending, attempt: entry.attempt))
            else { return false }
            return status.type == .regular
        }
        backlog.passStarted()
        passCount += 1
        let taken = backlog.passFoundHead(Array(entries))
        passWillFind = max(0, line.queued - items.count - taken)
        log.debug("took \(taken) of the \(line.entries.count) first item(s) in line from the last image; reading pending/ for the rest")
        announceQueue(pendingCount + uploads.count)
        writeRuns(excluding: Set(items.keys).union(entries.prefix(taken).map(\.id)))
    }

    /// Takes the last image's whole line: its pending items come into memory in line order as
    /// far as memory goes (each checked to still name a json in pending/, as a load checks), the
    /// rest wait by entry, the runs are read on from where that image was, and what it knew only
    /// by count waits for a pass. No listing of pending/: the recycle costs no pass. Returns
    /// false when the runs cannot be read on (a descriptor that is not a run of ours): the
    /// caller then falls back to a pass. An item moved into pending/ by hand in the instant of
    /// the exec is not in the line: the daemon adopts it from the events queued on the inotify
    /// instance the last image handed on (`SystemEventSource(adoptingWatcher:)`); without them,
    /// the next pass finds it, or the rescan once nothing waits on disk (`scanPending`).
    private func takeWholeLine(_ line: RecycleLine, _ handed: RecycleLine.Runs) -> Bool {
        var reader: BacklogReader?
        if !handed.runs.isEmpty {
            do {
                reader = try spool.resumeRuns(handed.runs)
            } catch {
                log.warning("cannot read on the runs the last image handed on (\(error)); reading pending/ instead")
                return false
            }
        }
        if reader?.peek == nil {
            reader?.close()
            reader = nil
        }
        backlogReader = reader
        runsLeft = reader == nil ? 0 : handed.left
        backlog.tookHandedLine(nextRun: reader?.peek, uncounted: handed.uncounted, earliestUncounted: handed.earliestUncounted)
        var loaded: [(ItemID, ItemLocation)] = []
        var waiting = 0
        for entry in line.entries where items[entry.id] == nil {
            if items.count < backlog.capacity {
                if let location = bringIntoMemory(entry) { loaded.append((entry.id, location)) }
            } else {
                backlog.evicted(entry)
                waiting += 1
                // Its last image's move into pending/ may still be queued on the inotify instance
                // handed on: not an operator's to adopt (it waits by entry already).
                ownArrivals.insert(entry.id)
            }
        }
        if !loaded.isEmpty { observers.itemsCameIntoMemory(loaded) }
        passWillFind = 0
        log.debug("took the last image's whole line: \(loaded.count) item(s) in memory, \(waiting) waiting, \(runsLeft) in \(handed.runs.count) run(s), \(handed.uncounted) for a pass to find")
        announceQueue(pendingCount + uploads.count)
        return true
    }

    /// Says once how many items the spool holds, as soon as a start knows.
    private func announceQueue(_ count: Int) {
        guard !queueAnnounced else { return }
        queueAnnounced = true
        log.info("spool \(spool.path): \(count) item(s) queued")
    }

    /// Part logs whose item is in none of pending/ (the first pass looked), inflight/ (recovery
    /// read it) or failed/ (read here, only when such logs exist; `retry` resumes a failed item's
    /// upload from its log): their item was uploaded, purged or removed by hand, or a power cut
    /// took a direct upload's take back. Removed, as a whole start-up recovery would.
    private func removeOrphanPartLogs(_ candidates: Set<ItemID>) {
        guard !candidates.isEmpty else { return }
        let failed = (try? spool.itemsPresent(candidates, in: .failed)) ?? candidates
        let orphans = candidates.subtracting(failed)
        for id in orphans.sorted() { spool.partLogs.remove(id) }
        if !orphans.isEmpty { log.info("recovery: removed \(orphans.count) part log(s) of items no longer in the spool") }
    }

    /// Takes the result of a pass that ended: its runs replace the earlier ones.
    func takeFinishedPasses(now: Timestamp) {
        for result in passInbox.take() {
            if pendingCensusExcluding != nil {
                // The start's pass, which also counted pending/: its count goes to the observers
                // even when its runs cannot be read.
                pendingCensusExcluding = nil
                observers.pendingCounted(result.flatMap { runs in runs.census.map { .success($0) } ?? .failure(NoCensus()) })
            }
            switch result {
            case .success(let runs):
                dropRuns()
                do {
                    let reader = try runs.open()
                    backlogRuns = runs
                    runsLeft = runs.count
                    backlog.passFinished(nextRun: reader.peek)
                    if reader.peek == nil {
                        reader.close()
                        dropRuns()
                    } else {
                        backlogReader = reader
                    }
                    passRetryAt = nil
                    log.debug("read pending/: \(runs.count) item(s) beyond memory, in \(runs.names.count) sorted run(s)")
                    passWillFind = 0
                    announceQueue(pendingCount + uploads.count)
                    // Its tally is not judged: a listing made while claims move pairs out of
                    // pending/ sees one file of some of them. The start's listing, made before
                    // anything moves, is (`readPendingAtStart`).
                } catch {
                    runs.remove()
                    passFailed(now: now, error)
                }
            case .failure(let error):
                passWillFind = 0
                passFailed(now: now, error)
            }
        }
    }

    private func passFailed(now: Timestamp, _ error: any Error) {
        backlog.passFailed()
        passRetryAt = now.adding(seconds: Engine.passRetrySeconds)
        log.warning("cannot read pending/ for the items beyond memory: \(error); trying again in \(formatSeconds(Engine.passRetrySeconds))")
    }

    static let passRetrySeconds = 5.0

    /// Closes and removes the current runs.
    func dropRuns() {
        backlogReader?.close()
        backlogReader = nil
        backlogRuns?.remove()
        backlogRuns = nil
        runsLeft = 0
    }
}

/// A pass asked to count pending/ that came back without a count (never expected): the observer
/// then knows nothing beyond memory, as when the listing fails.
private struct NoCensus: Error, CustomStringConvertible {
    var description: String { "the pass did not count pending/" }
}
