/// How `SpoolClient.enqueue` adds files: what `spoold enqueue`'s options say.
public struct EnqueueOptions: Sendable, Equatable {
    /// Sent with each item's requests (`--header 'Name: value'`); a credential is better given
    /// to the daemon (`--header-file`), since an item's json is readable on disk.
    public var headers: [String: String]
    /// Form fields for multipart uploads (`--field KEY=VALUE`).
    public var fields: [String: String]
    /// The items' content type (`--content-type`); nil: guessed from each file's name.
    public var contentType: String?
    /// Rename each file into the spool instead of copying it (`--move`; copied, then removed,
    /// across file systems).
    public var move: Bool
    /// Add files only while the queue (pending and in flight) takes less disk than this
    /// (`--max-spool-size`: the allocated blocks of both files of each item; give the daemon's
    /// value); the rest are refused (`.refused`, exit code 75).
    public var maximumSpoolBytes: Int64?

    public init(
        headers: [String: String] = [:], fields: [String: String] = [:], contentType: String? = nil, move: Bool = false,
        maximumSpoolBytes: Int64? = nil
    ) {
        self.headers = headers
        self.fields = fields
        self.contentType = contentType
        self.move = move
        self.maximumSpoolBytes = maximumSpoolBytes
    }
}

/// What became of one file given to `SpoolClient.enqueue`.
public struct EnqueueOutcome: Sendable, Equatable {
    public enum Result: Sendable, Equatable {
        /// An item now, durable: its id, which is also its uploads' `Idempotency-Key`.
        case added(id: String)
        /// Not added, left where it was (missing, not a regular file...): why, naming the file.
        case skipped(reason: String)
        /// Not added: the spool is at `maximumSpoolBytes`.
        case refused
    }

    public var file: String
    public var result: Result

    /// `spoold enqueue`'s exit code for a call with these outcomes: 0 all added, 1 some skipped,
    /// 75 some refused for a full spool.
    public static func exitCode(of outcomes: [EnqueueOutcome]) -> Int32 {
        if outcomes.contains(where: { $0.result == .refused }) { return 75 }
        return outcomes.allSatisfy { if case .added = $0.result { true } else { false } } ? 0 : 1
    }
}
