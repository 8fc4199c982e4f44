/// What a daemon passes to the fresh image of itself when it recycles (`execve` of itself, see
/// `RecycleTrigger`), in one environment variable: the descriptor of the spool lock it still
/// holds, how many times it has recycled, when the run started (`drain --max-time` counts from
/// there), the run's counts so far (the drain's exit code and last line cover the whole run) and
/// the trigger's reference memory (the bound holds for the whole run), the descriptor of a
/// memory-only file holding the first items in line (`RecycleLine`), when there was one, and the
/// descriptor of the inotify instance, whose watches and queued events the new image takes over.
///
/// Text, `key=value` pairs separated by `;`. Never trusted beyond itself: the lock descriptor is
/// checked to be the spool's lock file before it is used, and an unreadable value is ignored.
public struct RecycleHandoff: Equatable, Sendable {
    public static let variable = "SPOOLD_RECYCLED"

    public var lockDescriptor: Int32
    public var generation: Int
    public var startedAt: Timestamp
    public var ingested: Int
    public var uploaded: Int
    public var failed: Int
    public var retried: Int
    /// The recycle trigger's reference memory (KiB), once the first image noted it.
    public var referenceKiB: Int?
    /// The memory-only file holding the line (`RecycleLine`), checked to be one before it is read.
    public var lineDescriptor: Int32?
    /// The inotify instance (`InotifyWatcher(adopting:)`), checked to be one before it is used.
    public var watchDescriptor: Int32?

    public init(
        lockDescriptor: Int32, generation: Int, startedAt: Timestamp, ingested: Int = 0, uploaded: Int = 0,
        failed: Int = 0, retried: Int = 0, referenceKiB: Int? = nil, lineDescriptor: Int32? = nil, watchDescriptor: Int32? = nil
    ) {
        (self.lockDescriptor, self.generation, self.startedAt) = (lockDescriptor, generation, startedAt)
        (self.ingested, self.uploaded, self.failed, self.retried) = (ingested, uploaded, failed, retried)
        (self.referenceKiB, self.lineDescriptor, self.watchDescriptor) = (referenceKiB, lineDescriptor, watchDescriptor)
    }

    public var encoded: String {
        "lock=\(lockDescriptor);generation=\(generation);started=\(startedAt.millisecondsSinceEpoch);"
            + "ingested=\(ingested);uploaded=\(uploaded);failed=\(failed);retried=\(retried)"
            + (referenceKiB.map { ";reference=\($0)" } ?? "") + (lineDescriptor.map { ";line=\($0)" } ?? "")
            + (watchDescriptor.map { ";watch=\($0)" } ?? "")
    }

    /// nil unless every field but `reference`, `line` and `watch` (optional) is present and a non-negative number.
    public init?(parsing text: String) {
        var fields: [Substring: Int64] = [:]
        for pair in text.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Int64(parts[1]), value >= 0 else { return nil }
            fields[parts[0]] = value
        }
        guard let lock = fields["lock"], lock <= Int64(Int32.max), fields["line"].map({ $0 <= Int64(Int32.max) }) ?? true,
              fields["watch"].map({ $0 <= Int64(Int32.max) }) ?? true,
              let generation = fields["generation"],
              let started = fields["started"], let ingested = fields["ingested"], let uploaded = fields["uploaded"],
              let failed = fields["failed"], let retried = fields["retried"]
        else { return nil }
        self.init(
            lockDescriptor: Int32(lock), generation: Int(generation), startedAt: Timestamp(millisecondsSinceEpoch: started),
            ingested: Int(ingested), uploaded: Int(uploaded), failed: Int(failed), retried: Int(retried),
            referenceKiB: fields["reference"].map { Int($0) }, lineDescriptor: fields["line"].map { Int32($0) },
            watchDescriptor: fields["watch"].map { Int32($0) })
    }
}
