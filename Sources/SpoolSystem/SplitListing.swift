import Dispatch
import Glibc

/// A listing of one large folder on several threads at once, where the file system allows it.
///
/// ext4 (and ext2 and ext3, which its driver serves) keeps a folder of more than one block as a
/// hash tree and lists it in the order of its names' hashes; a listing's position (the `d_off`
/// of an entry, what `seekdir` takes) is then a name's hash, `(major >> 1) << 32 | minor` for a
/// 64-bit process, from 0 up to 2^63 - 1. Most of a listing of two million names is the kernel's
/// (it hashes every name it reads into its own sorted tree), on one core. Cut that hash space
/// into equal ranges and each thread lists one: each starts at its range's first position and
/// stops at the first entry past it, and every name is read once, by the thread whose range holds
/// its hash (a name's hash does not change while the folder is listed).
///
/// The position of an entry is the `d_off` of the one before it, so a range's first entry is the
/// only one whose own position is not known. When its `d_off` (the position after it) is still in
/// the range, it is in the range too; when not, it may belong to the next range (the ranges
/// between held no name), and is held back: if the next range's listing starts with the same
/// name, it is that range's, else this one's.
///
/// Nothing here is taken on trust: positions that go backwards in one range, or a first entry
/// before its range's start, mean the folder is not listed in hash order, and the listing is done
/// again whole, on one thread. Other file systems (tmpfs gives every name again after a `seekdir`
/// far past its end; XFS, btrfs and NFS have cookies of their own) are never split: only a folder
/// whose file system is ext4's and whose index flag is set (`FileSystem.listsInHashOrder`).
public enum SplitListing {
    /// Folders smaller than this (in bytes of directory blocks, about 20 names a KiB) are listed
    /// whole: a thread costs more than it saves there.
    public static let minimumFolderBytes: Int64 = 256 * 1024
    /// At most this many threads, however many cores the machine has: the rest of it (a daemon's
    /// uploads, the producers) needs the others.
    public static let maximumParts = 4

    /// How many parts a machine lists in at once: the cores this process may use (`CPUShare`:
    /// online, its affinity, its cgroup's quota), at most `maximumParts`.
    public static var partsForThisMachine: Int { max(1, min(maximumParts, CPUShare.cores)) }

    /// A listing gave positions that are not hash order: list the folder whole.
    struct NotHashOrdered: Error {}

    /// A listing from a position on: calls its body with each entry's name, type and the position
    /// after it, until the body returns false.
    public typealias PositionedListing = (
        _ from: Int64, _ body: (UnsafeRawBufferPointer, FileStatus.FileType, _ next: Int64) throws -> Bool
    ) throws -> Void

    /// The first position of each of `parts` equal ranges of the hash space (the last range runs
    /// to its end).
    static func starts(parts: Int) -> [Int64] {
        let span = UInt64(1) << 63 / UInt64(parts)
        return (0..<parts).map { Int64(span * UInt64($0)) }
    }

    /// Lists in `parts` ranges at once (`parts` > 1), each into a state of its own made by
    /// `start`; returns the states, one a range, or nil when the positions were not hash order
    /// (the caller then lists the folder whole). `body` runs on several threads at once, each
    /// with its own state; it never sees "." or "..". An error a range throws is thrown here.
    static func run<State: Sendable>(
        parts: Int, listing: PositionedListing, start: () -> State,
        _ body: (inout State, UnsafeRawBufferPointer, FileStatus.FileType) throws -> Void
    ) throws -> [State]? {
        precondition(parts > 1)
        let starts = starts(parts: parts)
        var results = [RangeResult<State>?](repeating: nil, count: parts)
        let states = (0..<parts).map { _ in start() }
        withoutActuallyEscaping(listing) { listing in
            withoutActuallyEscaping(body) { body in
                results.withUnsafeMutableBufferPointer { slots in
                    let slots = SendableSlots(slots)
                    let shared = Shared(listing: listing, body: body)
                    DispatchQueue.concurrentPerform(iterations: parts) { part in
                        let end = part + 1 < parts ? starts[part + 1] : nil
                        slots.pointer[part] = listRange(from: starts[part], to: end, state: states[part], shared: shared)
                    }
                    _ = slots
                }
            }
        }
        var finished = [RangeResult<State>]()
        for result in results {
            guard let result else { continue }
            if result.error is NotHashOrdered { return nil }
            if let error = result.error { throw error }
            finished.append(result)
        }
        // A range's held first entry: the next range's, when that range's listing began with it.
        for part in finished.indices {
            guard let held = finished[part].held else { continue }
            if part + 1 < finished.count, finished[part + 1].first?.name == held.name { continue }
            try held.name.withUnsafeBytes { try body(&finished[part].state, $0, held.type) }
        }
        return finished.map(\.state)
    }

    /// The closures every range calls, handed to the threads of `concurrentPerform`: each range
    /// calls `body` with its own state only, and `listing` opens a listing of its own.
    private struct Shared<State>: @unchecked Sendable {
        let listing: PositionedListing
        let body: (inout State, UnsafeRawBufferPointer, FileStatus.FileType) throws -> Void
    }

    /// Each range writes its result into a slot of its own.
    private struct SendableSlots<Element>: @unchecked Sendable {
        let pointer: UnsafeMutableBufferPointer<Element>
        init(_ pointer: UnsafeMutableBufferPointer<Element>) { self.pointer = pointer }
    }

    struct Entry: Sendable {
        let name: [UInt8]
        let type: FileStatus.FileType
    }

    struct RangeResult<State> {
        var state: State
        /// The first entry the range's listing gave (dot names aside).
        var first: Entry?
        /// That first entry, held back: the position after it lies past the range.
        var held: Entry?
        var error: (any Error)?
    }

    /// One range, `[from, to)` (`to` nil: to the end).
    private static func listRange<State>(from: Int64, to end: Int64?, state: State, shared: Shared<State>) -> RangeResult<State> {
        var result = RangeResult<State>(state: state)
        // The position of the entry at hand: the `d_off` of the one before it; unknown (nil) for
        // the range's first entry, which lies at `from` or after it.
        var position: Int64?
        do {
            try shared.listing(from) { name, type, next in
                if let position {
                    guard next >= position else { throw NotHashOrdered() }
                    if let end, position >= end { return false }
                } else if next < from {
                    throw NotHashOrdered()
                }
                position = next
                if name.count <= 2, name.allSatisfy({ $0 == UInt8(ascii: ".") }) { return true }  // "." and ".."
                if result.first == nil {
                    let entry = Entry(name: Array(name), type: type)
                    result.first = entry
                    // Its own position is at most `next`: in the range if `next` is; else
                    // perhaps the next range's (held back), and nothing after it is this range's.
                    if let end, next >= end {
                        result.held = entry
                        return false
                    }
                }
                try shared.body(&result.state, name, type)
                return true
            }
        } catch {
            result.error = error
        }
        return result
    }
}

extension FileSystem {
    /// Every name in a folder (not "." or ".."), as `forEachEntry` gives them, read by several
    /// threads at once where the folder is large and listed in hash order (`SplitListing`), else
    /// by this one. Each thread reads into a state of its own, made by `start`; the states come
    /// back for the caller to merge (one when the folder was listed whole). `body` runs on
    /// several threads at once: it must touch nothing but the state it is given.
    public func forEachEntryInParts<State: Sendable>(
        _ directory: FileDescriptor, parts: Int = SplitListing.partsForThisMachine,
        minimumFolderBytes: Int64 = SplitListing.minimumFolderBytes, start: () -> State,
        _ body: (inout State, UnsafeRawBufferPointer, FileStatus.FileType) throws -> Void
    ) throws -> [State] {
        if parts > 1, listsInHashOrder(directory), (try? status(of: directory).size).map({ $0 >= minimumFolderBytes }) ?? false,
           let states = try SplitListing.run(
               parts: parts, listing: { from, each in try forEachEntry(directory, from: from, each) }, start: start, body) {
            return states
        }
        var state = start()
        try forEachEntry(directory) { name, type in
            try body(&state, name, type)
            return true
        }
        return [state]
    }
}
