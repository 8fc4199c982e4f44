import SpoolCore

/// One item moving between folders, as `Spool.commit` performs it.
public struct SpoolTransition: Sendable {
    /// What is written to the index before anything moves; `from` must be non-nil.
    public var record: IndexRecord
    /// New contents for the item's json (attempt history), written before the move.
    public var metadata: ItemMetadata?
    /// Next-attempt time, stored as the json's mtime (the Postfix way).
    public var notBefore: Timestamp?

    public init(_ record: IndexRecord, metadata: ItemMetadata? = nil, notBefore: Timestamp? = nil) {
        precondition(record.from != nil, "a transition starts from an existing item")
        self.record = record
        self.metadata = metadata
        self.notBefore = notBefore
    }
}

/// What became of one transition of a batch.
public enum TransitionResult: Equatable, Sendable {
    case moved
    /// The item's files were gone (an operator purged or moved it): a lost race, not an error.
    case vanished(String)
}
