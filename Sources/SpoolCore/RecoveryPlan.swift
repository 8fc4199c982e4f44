/// What start-up recovery must do, decided by `RecoveryPlanner` from the directories and the index.
public struct RecoveryPlan: Equatable, Sendable {
    /// One file operation; performed in order, each idempotent in effect (a crash during recovery
    /// is just another crash: the next start plans again from what is then on disk).
    public enum Repair: Equatable, Sendable {
        case moveFile(ItemFileName, from: SpoolPlace, to: ItemFileName, in: SpoolPlace)
        case removeFile(ItemFileName, in: SpoolPlace)
        /// The blob survived but no json did: write a minimal one so nothing is lost.
        case recreateMetadata(ItemID, at: ItemLocation)
        /// The json survived but its blob is gone everywhere: to failed/ with this reason.
        case quarantineMissingBlob(ItemID, from: ItemLocation, to: ItemLocation)
    }

    public var repairs: [Repair] = []
    /// Where each surviving, complete item is once the repairs are done.
    public var items: [ItemID: ItemLocation] = [:]
    /// One line per repair for the log, in operator language.
    public var notes: [String] = []

    public init() {}
}
