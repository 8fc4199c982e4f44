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
/// When the handing image was not in the middle of a pass, it hands its whole line instead
/// (`runs`): every pending item it held in memory and its waiting list (`entries`), the open run
/// files of its last pass with where it was reading them, and what it knew only by count. The
/// new image then reads on from there and lists pending/ only when the old one would have: a
/// recycle at a million queued no longer costs a pass over pending/ (two seconds of a core).
///
/// Text: a header line `spoold-line 1 <queued>`; when the runs are handed, a line `runs <left>
/// <uncounted>`, a line `earliest ` and a `BacklogRunCodec` line when `uncounted` is above 0, and
/// a line `run <descriptor> <offset>` for each run; when the figures are handed, a line `figures
/// <items> <payload bytes> <disk bytes> <estimated 0|1>` and the lines of `CreationMinutes`; then
/// one `BacklogRunCodec` line per entry, in strictly increasing line order.
public struct RecycleLine: Equatable, Sendable {
    /// The name of the memory-only file (`memfd_create(2)`) the line is handed in.
    public static let fileName = "spoold-line"
    /// The most entries a line holds; a larger file is not one of ours. A whole line (`runs`)
    /// holds memory and the waiting list: 12,500 entries with the default `--queue-memory`.
    public static let maximumEntries = 32_768
    /// The most first items in line a line hands on when it is not whole (and a start reads in
    /// before its runs exist).
    public static let maximumHead = 4096
    /// The most runs a whole line hands on (a pass writes one for each 65,536 items or so).
    public static let maximumRuns = 4096
    /// The most bytes a line takes: an entry's line is at most about 110 bytes, a run's about
    /// 40, and the ages keep at most one count for each minute of about 11 days (2^14), plus a
    /// few ahead of the clock.
    public static let maximumBytes = 256 + maximumEntries * 128 + maximumRuns * 64 + 20_000 * 40

    /// One run file of the handing image's last pass, still open (its descriptor is kept across
    /// `execve`; the file itself is already removed from tmp/), and the offset of the first
    /// entry the handing image had not taken from it.
    public struct Run: Equatable, Sendable {
        public var descriptor: Int32
        public var offset: Int64

        public init(descriptor: Int32, offset: Int64) { (self.descriptor, self.offset) = (descriptor, offset) }
    }

    /// What lies beyond `entries` in a whole line: the runs read on from where the handing image
    /// was, how many entries it still counted in them, and the items it knew only by count (a
    /// waiting list that overflowed) with the earliest of them, which the new image's next pass finds.
    public struct Runs: Equatable, Sendable {
        public var runs: [Run]
        public var left: Int
        public var uncounted: Int
        public var earliestUncounted: BacklogEntry?

        public init(runs: [Run], left: Int, uncounted: Int = 0, earliestUncounted: BacklogEntry? = nil) {
            (self.runs, self.left, self.uncounted, self.earliestUncounted) = (runs, left, uncounted, earliestUncounted)
        }
    }

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
    /// Set when the line is whole: `entries` are every pending item the handing image held by
    /// entry (in memory and waiting), and the rest of the line is in these runs and counts.
    public var runs: Runs?

    public init(queued: Int, entries: [BacklogEntry], figures: Figures? = nil, runs: Runs? = nil) {
        precondition(entries.count <= RecycleLine.maximumEntries && (runs?.runs.count ?? 0) <= RecycleLine.maximumRuns)
        (self.queued, self.entries, self.figures, self.runs) = (queued, entries, figures, runs)
    }

    private static let header = Array("spoold-line 1 ".utf8)

    public var encoded: [UInt8] {
        var bytes = RecycleLine.header + Array("\(queued)\n".utf8)
        if let runs {
            bytes += Array("runs \(runs.left) \(runs.uncounted)\n".utf8)
            if runs.uncounted > 0, let earliest = runs.earliestUncounted {
                bytes += Array("earliest ".utf8)
                BacklogRunCodec.append(earliest, to: &bytes)
            }
            for run in runs.runs { bytes += Array("run \(run.descriptor) \(run.offset)\n".utf8) }
        }
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
        var runs: Runs?
        if let line = lines.first, line.starts(with: Array("runs ".utf8)) {
            lines = lines.dropFirst()
            let parts = String(decoding: line, as: UTF8.self).split(separator: " ")
            guard parts.count == 3, let left = Int(parts[1]), let uncounted = Int(parts[2]), left >= 0, uncounted >= 0 else { return nil }
            var earliest: BacklogEntry?
            if uncounted > 0 {
                guard let line = lines.popFirst(), line.starts(with: Array("earliest ".utf8)),
                      let entry = BacklogRunCodec.decode(line.dropFirst("earliest ".utf8.count))
                else { return nil }
                earliest = entry
            }
            var handed: [Run] = []
            while let line = lines.first, line.starts(with: Array("run ".utf8)) {
                lines = lines.dropFirst()
                let parts = String(decoding: line, as: UTF8.self).split(separator: " ")
                guard parts.count == 3, let fd = Int32(parts[1]), let offset = Int64(parts[2]), fd >= 0, offset >= 0,
                      handed.count < RecycleLine.maximumRuns, !handed.contains(where: { $0.descriptor == fd })
                else { return nil }
                handed.append(Run(descriptor: fd, offset: offset))
            }
            runs = Runs(runs: handed, left: left, uncounted: uncounted, earliestUncounted: earliest)
        }
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
        self.init(queued: queued, entries: entries, figures: figures, runs: runs)
    }
}
