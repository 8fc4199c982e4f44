/// Transitions whose index records are synced (`Spool.record`) but whose files may not have moved
/// yet (`Spool.apply`): after a crash, recovery puts each of them right.
public struct RecordedBatch: Sendable {
    public let transitions: [SpoolTransition]
    /// Positions whose new json contents wait in tmp/.
    let staged: Set<Int>
    /// Whether the batch was made durable by one `syncfs` rather than per-file fsyncs.
    let wholeFileSystem: Bool
}
