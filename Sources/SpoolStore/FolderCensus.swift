import Glibc
import SpoolCore
import SpoolSystem

/// What a state folder holds, read name by name (`FileSystem.forEachEntry`: no string per name
/// and no list kept, so a folder of a million items costs no memory here): its items, their
/// creation times, the oldest, and, for pending/, when the first in line is due; from the names
/// alone. Their bytes (payload and disk) need a stat of both files of each item: all of them
/// (`.all`), or, where a folder holds more than a budget, a sample from which the sums are
/// estimated (`.sample`), so that `spoold status` answers at once whatever the folder holds.
///
/// An item is its json; in inflight/ a blob without a json is an item too (a direct upload).
public struct FolderCensus: Sendable {
    public enum Measure: Sendable, Equatable {
        /// Every item's files are stat'ed: exact sums.
        case all
        /// At most about this many items are stat'ed: a fixed share of the ids (by a hash of
        /// each, halved whenever the budget is passed), the sums scaled up from them.
        case sample(budget: Int)
    }

    /// Items (jsons, and lone blobs in inflight/).
    public var items = 0
    /// When the items were made (from their ids), when asked for (`keepsCreationMinutes`).
    public var ages = CreationMinutes()
    /// The items by age at the census's `now`, to the millisecond (when one was given).
    public var shape = QueueAgeShape()
    public var oldest: ItemID?
    /// pending/: the earliest time in line (an untried item's creation time, a tried one's json
    /// mtime: its next-attempt time).
    public var nextDue: Timestamp?
    /// Names that are not item files (dot-names aside), and the first few of them.
    public var strayCount = 0
    public var strays: [String] = []

    /// Sums over the items measured, by hash class (`classes` of them), and how many each holds.
    var measuredByClass = [QueueUsage](repeating: QueueUsage(), count: FolderCensus.classes)
    /// One item in 2^level is measured (those whose class is a multiple of 2^level).
    var level = 0
    static let classes = 64

    /// Items measured: every item, or the sample.
    public var measuredItems: Int { sampled.items }

    /// The bytes the items take: exact when every item was measured, else the sample's sums
    /// scaled to all items (`isEstimated`).
    public var usage: QueueUsage {
        let sample = sampled
        guard sample.items < items, sample.items > 0 else { return QueueUsage(items: items, payloadBytes: sample.payloadBytes, diskBytes: sample.diskBytes) }
        let scale = Double(items) / Double(sample.items)
        return QueueUsage(
            items: items, payloadBytes: Int64((Double(sample.payloadBytes) * scale).rounded()),
            diskBytes: Int64((Double(sample.diskBytes) * scale).rounded()))
    }

    /// Whether the bytes are estimated from a sample.
    public var isEstimated: Bool { sampled.items < items }

    private var sampled: QueueUsage {
        var sum = QueueUsage()
        for (index, usage) in measuredByClass.enumerated() where index % (1 << level) == 0 { sum += usage }
        return sum
    }

    func measures(_ hashClass: Int) -> Bool { hashClass % (1 << level) == 0 }

    /// How many stray names a census keeps to show.
    static let straysKept = 16

    /// Adds one measured item's bytes to its hash class, and keeps within the budget.
    mutating func measure(_ usage: QueueUsage, hashClass: Int, within measure: Measure) {
        measuredByClass[hashClass] += usage
        keepWithin(measure)
    }

    /// Adds another listing's census of the same folder (another part of it): the counts and
    /// sums, the earliest id and due time; the sample is the coarser of the two (a class one of
    /// them dropped is dropped), kept within `measure`'s budget.
    mutating func absorb(_ other: FolderCensus, measure: Measure) {
        items += other.items
        ages.merge(other.ages)
        shape.merge(other.shape)
        if let theirs = other.oldest, oldest.map({ theirs < $0 }) ?? true { oldest = theirs }
        if let theirs = other.nextDue, nextDue.map({ theirs < $0 }) ?? true { nextDue = theirs }
        strayCount += other.strayCount
        strays.append(contentsOf: other.strays.prefix(max(0, FolderCensus.straysKept - strays.count)))
        for index in measuredByClass.indices { measuredByClass[index] += other.measuredByClass[index] }
        level = max(level, other.level)
        keepWithin(measure)
    }

    /// Past the budget: measure half as many from here on (and drop the classes no longer kept).
    mutating func keepWithin(_ measure: Measure) {
        guard case .sample(let budget) = measure else { return }
        while level < 6, sampled.items > budget { level += 1 }
    }

    public init() {}
}

/// A state folder as a census reads it, apart from the spool so it can run on another thread.
public struct FolderReading: Sendable {
    let fs: any FileSystem
    let fd: FileDescriptor
    let folder: SpoolFolder

    /// Reads the folder once. `excluding`: ids left out (the items a daemon holds in memory);
    /// `now`: the time `shape` counts ages at; `keepsCreationMinutes`: fill `ages`. `parts`: a
    /// large folder is listed on that many threads at once where the file system allows
    /// (`FileSystem.forEachEntryInParts`), each part with its share of a sample's budget; for
    /// someone waiting on the answer (`spoold status`), not for a daemon's count beside its uploads.
    public func census(
        measure: FolderCensus.Measure = .all, excluding: Set<ItemID> = [], now: Timestamp? = nil, keepsCreationMinutes: Bool = false,
        parts: Int = 1
    ) throws -> FolderCensus {
        let counter = CensusCounter(
            fs: fs, fd: fd, folder: folder, excluding: HashedIDs(excluding), now: now, keepsCreationMinutes: keepsCreationMinutes)
        var partMeasure = measure
        if case .sample(let budget) = measure, parts > 1 { partMeasure = .sample(budget: max(1, budget / parts)) }
        let states = try fs.forEachEntryInParts(fd, parts: parts, start: { CensusCounter.Part() }) { part, entry, _ in
            counter.take(entry, into: &part, measure: partMeasure)
        }
        return CensusCounter.merged(states, measure: measure)
    }

    /// An item's metadata, read as `Spool.readMetadata` reads it (on any thread).
    public func readMetadata(_ id: ItemID, attempt: Int) throws -> ItemMetadata {
        let name = ItemFileName(id: id, attempt: attempt, kind: .json).description
        let bytes = try Spool.readSmallFileAndStatus(
            name, in: fd, label: "\(folder.rawValue)/\(name)", limit: ItemMetadata.maximumEncodedSize, fs: fs).bytes
        return try MetadataCodec.decode(bytes)
    }

    static func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int32 {
        b.withUnsafeBytes { b in
            let n = min(a.count, b.count)
            let c = n == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, n)
            return c != 0 ? c : Int32(a.count) - Int32(b.count)
        }
    }
}

/// What a census does with each name of a folder, on whichever thread lists it.
struct CensusCounter: Sendable {
    let fs: any FileSystem
    let fd: FileDescriptor
    let folder: SpoolFolder
    let excluding: HashedIDs
    let now: Timestamp?
    let keepsCreationMinutes: Bool

    /// One listing's (or one part's) census so far.
    struct Part: Sendable {
        var census = FolderCensus()
        /// The oldest id's bytes, kept without a string per name.
        var oldest: [UInt8] = []
        /// The entry's bytes, to stat it or its sibling: copied only when needed.
        var name: [UInt8] = []

        var finished: FolderCensus {
            var census = census
            census.oldest = oldest.isEmpty ? nil : ItemID(String(decoding: oldest, as: UTF8.self))
            return census
        }
    }

    /// The census of a folder from its parts' (one when it was listed whole), within `measure`.
    static func merged(_ parts: [Part], measure: FolderCensus.Measure) -> FolderCensus {
        var census = FolderCensus()
        for part in parts { census.absorb(part.finished, measure: measure) }
        return census
    }

    func take(_ entry: UnsafeRawBufferPointer, into part: inout Part, measure: FolderCensus.Measure) {
        // Half the names are blobs, items of their own only in inflight/: skipped on their
        // last bytes, before the name is parsed (a listing of two million names is most of
        // status's time).
        if folder != .inflight, entry.count > 26, entry[entry.count - 5] == UInt8(ascii: "."), entry[entry.count - 4] == UInt8(ascii: "b"),
           entry[entry.count - 3] == UInt8(ascii: "l"), entry[entry.count - 2] == UInt8(ascii: "o"), entry[entry.count - 1] == UInt8(ascii: "b") {
            return
        }
        guard let shape = ItemFileName.shape(of: entry) else {
            if entry.first != UInt8(ascii: ".") {
                part.census.strayCount += 1
                if part.census.strays.count < FolderCensus.straysKept {
                    part.census.strays.append("\(folder.rawValue)/\(String(decoding: entry, as: UTF8.self))")
                }
            }
            return
        }
        let idBytes = UnsafeRawBufferPointer(rebasing: entry[0..<shape.idLength])
        var jsonStatus: FileStatus?
        func copyName() {
            part.name.removeAll(keepingCapacity: true)
            part.name.append(contentsOf: entry)
        }
        if shape.kind == .blob {
            // A blob is an item of its own only as a direct upload: in inflight/, without a json.
            guard folder == .inflight else { return }
            copyName()
            part.name.replaceSubrange((part.name.count - 4)..., with: "json".utf8)
            if (try? fs.status(of: String(decoding: part.name, as: UTF8.self), in: fd)) != nil { return }
            part.name.replaceSubrange((part.name.count - 4)..., with: "blob".utf8)
        }
        let hash = IDHash.of(idBytes)
        if excluding.member(idBytes, hash: hash) != nil { return }
        part.census.items += 1
        let createdAt = ItemID.createdAt(idBytes)
        if keepsCreationMinutes, let createdAt { part.census.ages.add(createdAt) }
        if let now { part.census.shape.add(ageSeconds: createdAt.map { $0.seconds(until: now) } ?? 0) }
        if part.oldest.isEmpty || FolderReading.compare(idBytes, part.oldest) < 0 {
            part.oldest.removeAll(keepingCapacity: true)
            part.oldest.append(contentsOf: idBytes)
        }
        if folder == .pending, shape.kind == .json {
            var due = createdAt
            if shape.attempt > 0 {
                copyName()
                jsonStatus = try? fs.status(of: String(decoding: part.name, as: UTF8.self), in: fd)
                due = jsonStatus.map { Timestamp(millisecondsSinceEpoch: $0.modifiedMilliseconds) } ?? due
            }
            if let due, part.census.nextDue.map({ due < $0 }) ?? true { part.census.nextDue = due }
        }
        let hashClass = Int(hash % UInt64(FolderCensus.classes))
        guard part.census.measures(hashClass) else { return }
        var usage = QueueUsage(items: 1)
        if jsonStatus == nil, shape.kind == .json { copyName() }
        if shape.kind == .json {
            if jsonStatus == nil { jsonStatus = try? fs.status(of: String(decoding: part.name, as: UTF8.self), in: fd) }
            usage.diskBytes += jsonStatus?.allocatedBytes ?? 0
            part.name.replaceSubrange((part.name.count - 4)..., with: "blob".utf8)
        }
        if let blob = try? fs.status(of: String(decoding: part.name, as: UTF8.self), in: fd) {
            usage.payloadBytes = blob.size
            usage.diskBytes += blob.allocatedBytes
        }
        part.census.measure(usage, hashClass: hashClass, within: measure)
    }
}

extension Spool {
    /// Every name in a folder, one at a time and without a copy (`FileSystem.forEachEntry`): a
    /// folder of a million names costs no memory.
    func forEachEntry(in folder: SpoolFolder, _ body: (UnsafeRawBufferPointer, FileStatus.FileType) throws -> Bool) throws {
        try fs.forEachEntry(descriptor(folder), body)
    }

    /// A state folder for a census, on this thread or another.
    public func reading(_ folder: SpoolFolder) -> FolderReading { FolderReading(fs: fs, fd: descriptor(folder), folder: folder) }
}
