import Glibc
import SpoolCore
import SpoolSystem

/// The queue beyond memory (`Backlog`): a pass reads pending/ once and writes what it found in
/// line order, so the daemon can take items a batch at a time however many wait.
///
/// The folder is listed name by name (no string per name: a million items cost no memory here);
/// each json's place in line is read from its name (untried: the time in its id) or, for a tried
/// item, from its mtime (its next-attempt time). Entries are sorted in chunks of `chunkSize` and
/// each chunk written as a run, `tmp/backlog.<pid>.<pass>.<n>`: scratch files, never synced, read
/// back merged (`BacklogReader`) and removed when used up or replaced; start-up recovery removes
/// any a stop left behind. A pass only reads the spool: it may run on a thread of its own.
extension Spool {
    /// Prefix of run files in tmp/.
    static let backlogRunPrefix = "backlog."

    /// Which of `ids` have an item file in `folder` (any attempt), read name by name.
    public func itemsPresent(_ ids: Set<ItemID>, in folder: SpoolFolder) throws -> Set<ItemID> {
        guard !ids.isEmpty else { return [] }
        let sought = HashedIDs(ids)
        var present = Set<ItemID>()
        try fs.forEachEntry(descriptor(folder)) { name, _ in
            guard let shape = ItemFileName.shape(of: name) else { return true }
            let idBytes = UnsafeRawBufferPointer(rebasing: name[0..<shape.idLength])
            if let id = sought.member(idBytes, hash: IDHash.of(idBytes)) { present.insert(id) }
            return true
        }
        return present
    }

    /// What a pass needs of the spool, to run on a thread of its own.
    public var backlogPass: BacklogPass { BacklogPass(fs: fs, pending: descriptor(.pending), tmp: descriptor(.tmp)) }
}

/// A pass over pending/ (`Spool.backlogPass`), apart from the spool so it can run on another
/// thread: it only lists and stats pending/ and writes its own runs in tmp/.
public struct BacklogPass: Sendable {
    let fs: any FileSystem
    let pending: FileDescriptor
    let tmp: FileDescriptor

    /// Reads pending/ and writes every item json whose id is not in `excluding` (those in memory)
    /// into sorted runs of `chunkSize` entries; `pass` numbers the runs' names. `watching`: ids
    /// whose presence in pending/ the caller wants to know (`BacklogRuns.watchedSeen`). `census`:
    /// also count the folder as `FolderReading.census` would (`BacklogRuns.census`), from the
    /// same listing, so a start does not list pending/ once more to learn what its queue takes.
    public func run(
        excluding: Set<ItemID>, watching: Set<ItemID> = [], pass: Int, chunkSize: Int = 65_536, census: PassCensus? = nil
    ) throws -> BacklogRuns {
        var chunk = BacklogChunk()
        var runs = BacklogRuns(fs: fs, tmp: tmp)
        var counted = CensusCounter.Part()
        let count: ((UnsafeRawBufferPointer) -> Void)? = census.map { census in
            let counter = CensusCounter(
                fs: fs, fd: pending, folder: .pending, excluding: HashedIDs(census.excluding), now: nil,
                keepsCreationMinutes: census.keepsCreationMinutes)
            return { name in counter.take(name, into: &counted, measure: census.measure) }
        }
        do {
            runs.tally = try scan(excluding: excluding, watching: watching, everyName: count) { notBefore, attempt, id in
                chunk.append(notBefore: notBefore, attempt: attempt, id: id)
                if chunk.count >= chunkSize { try runs.write(&chunk, pass: pass) }
            }
            if chunk.count > 0 { try runs.write(&chunk, pass: pass) }
        } catch {
            runs.remove()
            throw error
        }
        if let census { runs.census = CensusCounter.merged([counted], measure: census.measure) }
        return runs
    }

    /// The first `limit` items in line of pending/ (those in `excluding` left out), read without
    /// writing anything: one listing of the names, keeping the earliest entries as it goes. A
    /// start reads this first, so uploading begins before the runs of a large queue are written;
    /// it waits for it, so a large pending/ is listed on `parts` threads at once where the file
    /// system allows (`FileSystem.forEachEntryInParts`), each keeping its own earliest entries.
    public func head(
        limit: Int, excluding: Set<ItemID>, watching: Set<ItemID> = [], parts: Int = SplitListing.partsForThisMachine
    ) throws -> BacklogHead {
        let sieve = ScanSieve(excluding: excluding, watching: watching)
        let (fs, pending) = (fs, pending)
        let states = try fs.forEachEntryInParts(pending, parts: parts, start: { (PendingTally(), BacklogHeadHeap(limit: limit)) }) { part, name, type in
            guard let found = sieve.take(name, type, tally: &part.0, fs: fs, pending: pending) else { return }
            part.1.offer(notBefore: found.notBefore, attempt: found.attempt, id: found.id)
        }
        var (tally, heap) = states[0]
        for (otherTally, otherHeap) in states.dropFirst() {
            tally.absorb(otherTally)
            heap.absorb(otherHeap)
        }
        return BacklogHead(entries: heap.sorted(), tally: tally)
    }

    /// Lists pending/ once, on this thread: tallies every item file (`PendingTally`) and hands
    /// each item json not in `excluding` to `found` with its place in line (`ScanSieve`), and
    /// every name to `everyName`.
    private func scan(
        excluding: Set<ItemID>, watching: Set<ItemID>, everyName: ((UnsafeRawBufferPointer) -> Void)?,
        _ found: (_ notBefore: Int64, _ attempt: Int, _ id: UnsafeRawBufferPointer) throws -> Void
    ) throws -> PendingTally {
        let sieve = ScanSieve(excluding: excluding, watching: watching)
        var tally = PendingTally()
        try fs.forEachEntry(pending) { name, type in
            everyName?(name)
            if let entry = sieve.take(name, type, tally: &tally, fs: fs, pending: pending) {
                try found(entry.notBefore, entry.attempt, entry.id)
            }
            return true
        }
        return tally
    }
}

/// A census of pending/ asked of a pass (`BacklogPass.run(census:)`): what `FolderReading.census`
/// takes, counted from the pass's own listing.
public struct PassCensus: Sendable, Equatable {
    /// Ids left out of the count (the items a daemon held in memory when it asked).
    public var excluding: Set<ItemID>
    public var measure: FolderCensus.Measure
    public var keepsCreationMinutes: Bool

    public init(excluding: Set<ItemID>, measure: FolderCensus.Measure, keepsCreationMinutes: Bool) {
        (self.excluding, self.measure, self.keepsCreationMinutes) = (excluding, measure, keepsCreationMinutes)
    }
}

/// What a listing of pending/ does with each name, on whichever thread lists it: tallies every
/// item file, and gives each item json not excluded with its place in line: untried, the time in
/// its id; tried, its json's mtime (one gone meanwhile was claimed or moved, and is skipped).
struct ScanSieve: Sendable {
    let excluding: HashedIDs
    let watching: HashedIDs

    init(excluding: Set<ItemID>, watching: Set<ItemID>) {
        (self.excluding, self.watching) = (HashedIDs(excluding), HashedIDs(watching))
    }

    /// The entry's place in line, or nil when it is not an item json in line. `id` is part of `name`.
    func take(
        _ name: UnsafeRawBufferPointer, _ type: FileStatus.FileType, tally: inout PendingTally, fs: any FileSystem, pending: FileDescriptor
    ) -> (notBefore: Int64, attempt: Int, id: UnsafeRawBufferPointer)? {
        guard let shape = ItemFileName.shape(of: name) else { return nil }
        if type != .regular && type != .unknown { tally.oddEntries += 1 }  // a folder, a FIFO... named like an item file
        let idBytes = UnsafeRawBufferPointer(rebasing: name[0..<shape.idLength])
        let hash = IDHash.of(idBytes)
        tally.count(shape, hash: hash)
        guard shape.kind == .json else { return nil }
        if let id = watching.member(idBytes, hash: hash) { tally.watchedSeen.insert(id) }
        if excluding.member(idBytes, hash: hash) != nil { return nil }
        let notBefore: Int64
        if shape.attempt == 0 {
            notBefore = ItemID.createdAt(idBytes)?.millisecondsSinceEpoch ?? 0
        } else {
            guard let status = try? fs.status(of: String(decoding: name, as: UTF8.self), in: pending) else { return nil }
            notBefore = status.modifiedMilliseconds
        }
        tally.queued += 1
        return (notBefore, shape.attempt, idBytes)
    }
}

/// What a listing of pending/ saw besides the entries in line: enough to tell that pending/
/// holds something only a whole recovery repairs.
public struct PendingTally: Sendable {
    /// Item jsons and blobs seen (in memory or not): a difference means lone files, which
    /// `spoold check` names.
    public internal(set) var jsonsSeen = 0
    public internal(set) var blobsSeen = 0
    /// Item jsons handed on in line (those not excluded, not gone meanwhile).
    public internal(set) var queued = 0
    /// Entries named like item files that are not regular files (folders, FIFOs...).
    public internal(set) var oddEntries = 0
    /// The watched ids whose json was seen.
    public internal(set) var watchedSeen = Set<ItemID>()
    /// Each item file's (id, attempt), summed and xored by kind: equal for jsons and blobs when
    /// every json has its blob and the other way round.
    private var pairs = (jsonSum: UInt64(0), jsonXor: UInt64(0), blobSum: UInt64(0), blobXor: UInt64(0))

    /// Every item json seen had its blob, and every blob its json.
    public var pairsMatch: Bool { pairs.jsonSum == pairs.blobSum && pairs.jsonXor == pairs.blobXor }

    /// Whether pending/ held something only a whole recovery repairs: a lone json or blob, or an
    /// entry named like an item file that is not a regular file.
    public var needsRepair: Bool { !pairsMatch || oddEntries > 0 }

    /// For the log: "2 item json(s), 1 blob(s), 0 not regular files".
    public var filesSeen: String { "\(jsonsSeen) item json(s), \(blobsSeen) blob(s), \(oddEntries) not regular files" }

    /// Adds what another listing (another part of the same folder) saw.
    mutating func absorb(_ other: PendingTally) {
        jsonsSeen += other.jsonsSeen
        blobsSeen += other.blobsSeen
        queued += other.queued
        oddEntries += other.oddEntries
        watchedSeen.formUnion(other.watchedSeen)
        pairs.jsonSum &+= other.pairs.jsonSum
        pairs.jsonXor ^= other.pairs.jsonXor
        pairs.blobSum &+= other.pairs.blobSum
        pairs.blobXor ^= other.pairs.blobXor
    }

    mutating func count(_ shape: ItemFileName.Shape, hash: UInt64) {
        let key = hash &+ UInt64(shape.attempt) &* 0x9E37_79B9_7F4A_7C15
        if shape.kind == .json {
            jsonsSeen += 1
            pairs.jsonSum &+= key
            pairs.jsonXor ^= key
        } else {
            blobsSeen += 1
            pairs.blobSum &+= key
            pairs.blobXor ^= key
        }
    }
}

/// The first items in line of pending/ (`BacklogPass.head`), and what the listing saw.
public struct BacklogHead: Sendable {
    /// In line order; every other item the listing handed on comes after the last of them.
    public let entries: [BacklogEntry]
    public let tally: PendingTally

    /// Whether the head is all of pending/ beyond what was excluded: no runs are needed.
    public var isWhole: Bool { entries.count == tally.queued }
}

/// The `limit` earliest entries offered, kept in a max-heap by line order: an entry after the
/// latest kept is turned away with one comparison, without a string made for it.
struct BacklogHeadHeap {
    private struct Kept {
        var notBefore: Int64
        var attempt: Int
        var id: [UInt8]
    }

    let limit: Int
    private var heap: [Kept] = []

    init(limit: Int) { self.limit = max(0, limit) }

    private static func precedes(_ notBefore: Int64, _ id: UnsafeRawBufferPointer, _ other: Kept) -> Bool {
        if notBefore != other.notBefore { return notBefore < other.notBefore }
        return other.id.withUnsafeBytes { id.lexicographicallyPrecedes($0) }
    }

    private static func precedes(_ a: Kept, _ b: Kept) -> Bool {
        a.id.withUnsafeBytes { precedes(a.notBefore, $0, b) }
    }

    mutating func offer(notBefore: Int64, attempt: Int, id: UnsafeRawBufferPointer) {
        guard limit > 0 else { return }
        if heap.count == limit {
            guard Self.precedes(notBefore, id, heap[0]) else { return }
            heap[0] = Kept(notBefore: notBefore, attempt: attempt, id: Array(id))
            siftDown(0)
        } else {
            heap.append(Kept(notBefore: notBefore, attempt: attempt, id: Array(id)))
            siftUp(heap.count - 1)
        }
    }

    /// Offers every entry `other` kept (another part of the same listing).
    mutating func absorb(_ other: BacklogHeadHeap) {
        for kept in other.heap {
            kept.id.withUnsafeBytes { offer(notBefore: kept.notBefore, attempt: kept.attempt, id: $0) }
        }
    }

    /// The entries kept, in line order (an id that is not one is dropped: never ours).
    func sorted() -> [BacklogEntry] {
        heap.sorted(by: Self.precedes).compactMap { kept in
            ItemID(String(decoding: kept.id, as: UTF8.self)).map {
                BacklogEntry(notBefore: Timestamp(millisecondsSinceEpoch: kept.notBefore), id: $0, attempt: kept.attempt)
            }
        }
    }

    // The root is the latest entry kept.
    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[parent], heap[child]) else { return }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            var latest = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count && Self.precedes(heap[latest], heap[child]) {
                latest = child
            }
            guard latest != parent else { return }
            heap.swapAt(parent, latest)
            parent = latest
        }
    }
}

extension Spool {
    /// The payload bytes of the items in a state folder: the sizes of its item blobs, read name
    /// by name (no list kept).
    public func payloadBytes(in folder: SpoolFolder) throws -> Int64 {
        let fd = descriptor(folder)
        var total: Int64 = 0
        try fs.forEachEntry(fd) { name, _ in
            guard let shape = ItemFileName.shape(of: name), shape.kind == .blob,
                  let status = try? fs.status(of: String(decoding: name, as: UTF8.self), in: fd)
            else { return true }
            total += status.size
            return true
        }
        return total
    }

    /// Reads on the runs the last image of this process handed on (`BacklogReader.handOver`).
    /// Each descriptor must be an open regular file linked nowhere (the last image removed the
    /// file from tmp/ and kept it open): anything else is not a run of ours, and none is read.
    public func resumeRuns(_ runs: [RecycleLine.Run]) throws -> BacklogReader {
        for run in runs where !isHandedRun(run) { throw HandedRunRefused(descriptor: run.descriptor) }
        return try BacklogReader(resuming: runs, fs: fs)
    }

    /// Closes the handed runs that are ours (open regular files linked nowhere), when they are
    /// not read after all.
    public func closeHandedRuns(_ runs: [RecycleLine.Run]) {
        for run in runs where isHandedRun(run) { fs.close(FileDescriptor(rawValue: run.descriptor)) }
    }

    private func isHandedRun(_ run: RecycleLine.Run) -> Bool {
        guard let status = try? fs.status(of: FileDescriptor(rawValue: run.descriptor)) else { return false }
        return status.type == .regular && status.linkCount == 0
    }

    /// Whether a name in tmp/ is a pass's run (a running daemon's own, in use).
    public static func isBacklogRun(_ name: String) -> Bool { name.hasPrefix(backlogRunPrefix) }

}

/// A descriptor named as a handed run that is not an open run file linked nowhere.
public struct HandedRunRefused: Error, CustomStringConvertible {
    public let descriptor: Int32
    public var description: String { "descriptor \(descriptor) is not a run file handed on by the last image" }
}

/// Entries of one chunk: their keys and their ids' bytes side by side, sorted without a string each.
struct BacklogChunk {
    struct Key {
        var notBefore: Int64
        var attempt: Int32
        var offset: Int32
        var length: Int32
    }

    private(set) var keys: [Key] = []
    private(set) var bytes: [UInt8] = []
    var count: Int { keys.count }

    mutating func append(notBefore: Int64, attempt: Int, id: UnsafeRawBufferPointer) {
        keys.append(Key(notBefore: notBefore, attempt: Int32(attempt), offset: Int32(bytes.count), length: Int32(id.count)))
        bytes.append(contentsOf: id)
    }

    /// The chunk as a run: sorted by due time, then id (the order of `BacklogEntry`), one line each.
    mutating func encodedRun() -> [UInt8] {
        bytes.withUnsafeBufferPointer { all in
            keys.sort { a, b in
                if a.notBefore != b.notBefore { return a.notBefore < b.notBefore }
                let n = Int(min(a.length, b.length))
                let c = memcmp(all.baseAddress! + Int(a.offset), all.baseAddress! + Int(b.offset), n)
                return c != 0 ? c < 0 : a.length < b.length
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + keys.count * 20)
        bytes.withUnsafeBytes { all in
            for key in keys {
                BacklogRunCodec.append(
                    notBefore: key.notBefore, attempt: Int(key.attempt),
                    id: UnsafeRawBufferPointer(rebasing: all[Int(key.offset)..<Int(key.offset + key.length)]), to: &out)
            }
        }
        keys.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        return out
    }
}

/// The runs of one pass over pending/: scratch files in tmp/, each sorted.
public struct BacklogRuns: Sendable {
    let fs: any FileSystem
    let tmp: FileDescriptor
    public private(set) var names: [String] = []
    /// Entries written, in all runs.
    public private(set) var count = 0
    /// What the listing saw besides the entries (`needsRepair`, `watchedSeen`). Not judged by
    /// the engine for a pass made while claims move pairs out of pending/ (see `readPendingAtStart`).
    public internal(set) var tally = PendingTally()
    /// pending/ as a census counts it, when the pass was asked for one (`PassCensus`).
    public internal(set) var census: FolderCensus?

    init(fs: any FileSystem, tmp: FileDescriptor) { (self.fs, self.tmp) = (fs, tmp) }

    mutating func write(_ chunk: inout BacklogChunk, pass: Int) throws {
        let entries = chunk.count
        let run = chunk.encodedRun()
        var name = ""
        var fd: FileDescriptor?
        while fd == nil {
            name = "\(Spool.backlogRunPrefix)\(getpid()).\(pass).\(names.count).\(UInt32.random(in: 0...UInt32.max))"
            do {
                fd = try fs.open(name, relativeTo: tmp, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
            } catch let error as SystemError where error.errno == .fileExists {
                continue
            }
        }
        names.append(name)
        try fs.closing(fd!) { fd in try fs.writeAll(fd, run, label: "tmp/\(name)") }
        count += entries
    }

    /// Reads the runs back as one ordered stream.
    public func open() throws -> BacklogReader {
        var sources: [RunFileSource] = []
        do {
            for name in names {
                sources.append(RunFileSource(fs: fs, fd: try fs.open(name, relativeTo: tmp, flags: [.readOnly], mode: 0), name: name))
            }
            return BacklogReader(merge: try BacklogMerge(sources), sources: sources.map(\.fd), fs: fs)
        } catch {
            for source in sources { fs.close(source.fd) }
            throw error
        }
    }

    /// Removes the run files (a missing one is fine).
    public func remove() {
        for name in names { try? fs.remove(name, in: tmp, isDirectory: false) }
    }
}

/// The runs of a pass read back in line order, one entry at a time.
public struct BacklogReader {
    private var merge: BacklogMerge<RunFileSource>
    private let descriptors: [FileDescriptor]
    private let fs: any FileSystem

    init(merge: BacklogMerge<RunFileSource>, sources: [FileDescriptor], fs: any FileSystem) {
        (self.merge, self.descriptors, self.fs) = (merge, sources, fs)
    }

    /// Reads on runs the last image of this process was reading (`handOver`): each open run
    /// file from its offset, the start of the entry that image had read but not taken.
    public init(resuming runs: [RecycleLine.Run], fs: any FileSystem) throws {
        var sources: [RunFileSource] = []
        for run in runs {
            let fd = FileDescriptor(rawValue: run.descriptor)
            try fs.seek(fd, to: run.offset)
            sources.append(RunFileSource(fs: fs, fd: fd, name: "run handed on (fd \(run.descriptor))", offset: run.offset))
        }
        self.init(merge: try BacklogMerge(sources), sources: sources.map(\.fd), fs: fs)
    }

    public var peek: BacklogEntry? { merge.peek }

    public mutating func next() throws -> BacklogEntry? { try merge.next() }

    /// Closes the run files (they are removed with `BacklogRuns.remove`).
    public func close() { for fd in descriptors { fs.close(fd) } }

    /// For a recycle: the runs not used up, each with the offset to read it on from (its entry
    /// the merge holds), their descriptors left open for the next image (`init(resuming:)`);
    /// the used-up ones are closed. The reader is not to be used after.
    public func handOver() -> [RecycleLine.Run] {
        let held = merge.held
        let kept = Set(held.map(\.source.fd))
        for fd in descriptors where !kept.contains(fd) { fs.close(fd) }
        return held.map { RecycleLine.Run(descriptor: $0.source.fd.rawValue, offset: $0.source.lastEntryOffset) }
    }
}

/// One run file, read in 64 KiB pieces and cut into lines.
struct RunFileSource: BacklogSource {
    let fs: any FileSystem
    let fd: FileDescriptor
    let name: String
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    /// Where in the file `buffer` starts.
    private var bufferOffset: Int64
    /// Where in the file the entry `next` returned last starts.
    private(set) var lastEntryOffset: Int64

    /// `offset`: where the descriptor reads from (0 for a run just written).
    init(fs: any FileSystem, fd: FileDescriptor, name: String, offset: Int64 = 0) {
        (self.fs, self.fd, self.name) = (fs, fd, name)
        (bufferOffset, lastEntryOffset) = (offset, offset)
    }

    mutating func next() throws -> BacklogEntry? {
        while true {
            let (found, entry, consumed) = buffer.withUnsafeBytes { all -> (Bool, BacklogEntry?, Int) in
                let rest = UnsafeRawBufferPointer(rebasing: all[position...])
                guard let base = rest.baseAddress, let hit = memchr(base, 0x0A, rest.count) else { return (false, nil, 0) }
                let length = base.distance(to: UnsafeRawPointer(hit))
                return (true, BacklogRunCodec.decode(UnsafeRawBufferPointer(start: base, count: length)), length + 1)
            }
            if found {
                let start = bufferOffset + Int64(position)
                position += consumed
                // A line that is not ours cannot come from our own pass: skip it rather than stop.
                if let entry {
                    lastEntryOffset = start
                    return entry
                }
                continue
            }
            if atEnd { return nil }
            buffer.removeSubrange(0..<position)
            bufferOffset += Int64(position)
            position = 0
            let before = buffer.count
            buffer.reserveCapacity(before + 65_536)
            let n = try [UInt8](unsafeUninitializedCapacity: 65_536) { piece, count in
                count = try fs.read(fd, into: UnsafeMutableRawBufferPointer(piece))
            }
            if n.isEmpty { atEnd = true } else { buffer.append(contentsOf: n) }
        }
    }
}
