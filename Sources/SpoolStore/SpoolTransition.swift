import SpoolCore

/// One item moving between folders, as `Spool.commit` performs it.
public struct SpoolTransition: Sendable {
    /// What is written to the index before anything moves; `from` must be non-nil.
    public var record: IndexRecord
    /// New contents for the item's json (attempt history), written before the move.
    public var metadata: ItemMetadata?
    /// Next-attempt time, stored as the json's mtime (the Postfix way).
    public var notBefore: Timestamp?
    /// The item was sent straight from incoming/ (`Spool.takeForDirectUpload`): at `from` it has
    /// a blob and no json, and nothing of it was synced. Its batch is made durable with one
    /// `syncfs`, which covers the blob's data and its rename out of incoming/ too.
    public var fromDirectUpload: Bool

    public init(_ record: IndexRecord, metadata: ItemMetadata? = nil, notBefore: Timestamp? = nil, fromDirectUpload: Bool = false) {
        precondition(record.from != nil, "a transition starts from an existing item")
        precondition(!fromDirectUpload || metadata != nil, "a direct upload's transition writes its first json")
        self.record = record
        self.metadata = metadata
        self.notBefore = notBefore
        self.fromDirectUpload = fromDirectUpload
    }
}

/// What became of one transition of a batch.
public enum TransitionResult: Equatable, Sendable {
    case moved
    /// The item's files were gone (an operator purged or moved it): a lost race, not an error.
    case vanished(String)
}
