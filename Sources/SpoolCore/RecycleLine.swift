/// The first items in line that a recycling daemon hands to the next image of itself, with the
/// count of what it had queued: the new image sends them at once, while a pass over pending/ on
/// its own thread finds the rest, instead of listing pending/ before its first request (0.8 s at
/// a million items, each recycle). Handed in a memory-only file (`RecycleHandoff.lineDescriptor`),
/// never written to the spool: a crash or a power cut loses nothing but this hint.
///
/// A hint, checked where it is used: each entry must still name a json in pending/ at its
/// attempt (an operator may have moved it meanwhile), and the pass still reads all of pending/.
///
/// The queue's figures travel with it (`Figures`: the bytes and disk it takes and its items' ages,
/// as the handing image kept them), so the new image does not count pending/ again either.
///
/// Text: a header line `spoold-line 1 <queued>`; when the figures are handed, a line `figures
/// <items> <payload bytes> <disk bytes> <estimated 0|1>` and the lines of `CreationMinutes`; then
/// one `BacklogRunCodec` line per entry, in strictly increasing line order.
public struct RecycleLine: Equatable, Sendable {
    /// The name of the memory-only file (`memfd_create(2)`) the line is handed in.
    public static let fileName = "spoold-line"
    /// The most entries a line holds; a larger file is not one of ours.
    public static let maximumEntries = 4096
    /// The most bytes a line takes: an entry's line is at most about 110 bytes, and the ages
    /// keep at most one count for each minute of about 11 days (2^14), plus a few ahead of the
    /// clock.
    public static let maximumBytes = 64 + maximumEntries * 128 + 20_000 * 40

    /// What the queue takes, as the handing image's sums had it (`QueueBytes`).
    public struct Figures: Equatable, Sendable {
        /// Pending items (in memory and beyond), their payload and the disk their files take.
        public var usage: QueueUsage
        /// Whether the sums beyond memory were scaled up from a sample.
        public var isEstimated: Bool
        public var ages: CreationMinutes

        public init(usage: QueueUsage, isEstimated: Bool, ages: CreationMinutes) {
            (self.usage, self.isEstimated, self.ages) = (usage, isEstimated, ages)
        }
    }

    /// Pending items the handing image had queued (in memory and beyond; those in flight not
    /// counted): what the new image says it holds until its pass has counted them.
    public var queued: Int
    /// The first of them in line, in line order: nothing the handing image knew of came before
    /// the last of them.
    public var entries: [BacklogEntry]
    /// What the queue takes, when the handing image had counted it.
    public var figures: Figures?

    public init(queued: Int, entries: [BacklogEntry], figures: Figures? = nil) {
        precondition(entries.count <= RecycleLine.maximumEntries)
        (self.queued, self.entries, self.figures) = (queued, entries, figures)
    }

    private static let header = Array("spoold-line 1 ".utf8)

    public var encoded: [UInt8] {
        var bytes = RecycleLine.header + Array("\(queued)\n".utf8)
        if let figures {
            let usage = figures.usage
            var text = "figures \(usage.items) \(usage.payloadBytes) \(usage.diskBytes) \(figures.isEstimated ? 1 : 0)\n"
            for line in figures.ages.lines { text += line + "\n" }
            bytes += Array(text.utf8)
        }
        for entry in entries { BacklogRunCodec.append(entry, to: &bytes) }
        return bytes
    }

    /// nil unless `bytes` is a whole line as `encoded` writes it: the header, then entries that
    /// each parse, in strictly increasing order, at most `maximumEntries`.
    public init?(parsing bytes: [UInt8]) {
        guard bytes.count <= RecycleLine.maximumBytes, bytes.last == UInt8(ascii: "\n") else { return nil }
        var lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[...]
        guard let first = lines.popFirst(), first.starts(with: RecycleLine.header),
              let queued = Int(String(decoding: first.dropFirst(RecycleLine.header.count), as: UTF8.self)), queued >= 0
        else { return nil }
        var figures: Figures?
        if let line = lines.first, line.starts(with: Array("figures ".utf8)) {
            let parts = String(decoding: line, as: UTF8.self).split(separator: " ")
            lines = lines.dropFirst()
            let ageLines = lines.prefix { $0.first.map { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") } ?? false }
            lines = lines.dropFirst(ageLines.count)
            guard parts.count == 5, let items = Int(parts[1]), let payload = Int64(parts[2]), let disk = Int64(parts[3]),
                  items >= 0, payload >= 0, disk >= 0, parts[4] == "0" || parts[4] == "1",
                  let ages = CreationMinutes(lines: ageLines.map { Substring(String(decoding: $0, as: UTF8.self)) })
            else { return nil }
            figures = Figures(usage: QueueUsage(items: items, payloadBytes: payload, diskBytes: disk), isEstimated: parts[4] == "1", ages: ages)
        }
        guard lines.count <= RecycleLine.maximumEntries else { return nil }
        var entries: [BacklogEntry] = []
        for line in lines {
            guard let entry = BacklogRunCodec.decode(line), entries.last.map({ $0 < entry }) ?? true else { return nil }
            entries.append(entry)
        }
        self.init(queued: queued, entries: entries, figures: figures)
    }
}
