/// The first items in line that a recycling daemon hands to the next image of itself, with the
/// count of what it had queued: the new image sends them at once, while a pass over pending/ on
/// its own thread finds the rest, instead of listing pending/ before its first request (0.8 s at
/// a million items, each recycle). Handed in a memory-only file (`RecycleHandoff.lineDescriptor`),
/// never written to the spool: a crash or a power cut loses nothing but this hint.
///
/// A hint, checked where it is used: each entry must still name a json in pending/ at its
/// attempt (an operator may have moved it meanwhile), and the pass still reads all of pending/.
///
/// Text: a header line `spoold-line 1 <queued>`, then one `BacklogRunCodec` line per entry, in
/// strictly increasing line order.
public struct RecycleLine: Equatable, Sendable {
    /// The name of the memory-only file (`memfd_create(2)`) the line is handed in.
    public static let fileName = "spoold-line"
    /// The most entries a line holds; a larger file is not one of ours.
    public static let maximumEntries = 4096
    /// The most bytes a line takes (an entry's line is at most about 110 bytes).
    public static let maximumBytes = 64 + maximumEntries * 128

    /// Pending items the handing image had queued (in memory and beyond; those in flight not
    /// counted): what the new image says it holds until its pass has counted them.
    public var queued: Int
    /// The first of them in line, in line order: nothing the handing image knew of came before
    /// the last of them.
    public var entries: [BacklogEntry]

    public init(queued: Int, entries: [BacklogEntry]) {
        precondition(entries.count <= RecycleLine.maximumEntries)
        (self.queued, self.entries) = (queued, entries)
    }

    private static let header = Array("spoold-line 1 ".utf8)

    public var encoded: [UInt8] {
        var bytes = RecycleLine.header + Array("\(queued)\n".utf8)
        for entry in entries { BacklogRunCodec.append(entry, to: &bytes) }
        return bytes
    }

    /// nil unless `bytes` is a whole line as `encoded` writes it: the header, then entries that
    /// each parse, in strictly increasing order, at most `maximumEntries`.
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count <= RecycleLine.maximumBytes, bytes.last == UInt8(ascii: "\n") else { return nil }
        var lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[...]
        guard let first = lines.popFirst(), first.starts(with: RecycleLine.header),
              let queued = Int(String(decoding: first.dropFirst(RecycleLine.header.count), as: UTF8.self)), queued >= 0,
              lines.count <= RecycleLine.maximumEntries
        else { return nil }
        var entries: [BacklogEntry] = []
        for line in lines {
            guard let entry = BacklogRunCodec.decode(line), entries.last.map({ $0 < entry }) ?? true else { return nil }
            entries.append(entry)
        }
        self.init(queued: queued, entries: entries)
    }
}
