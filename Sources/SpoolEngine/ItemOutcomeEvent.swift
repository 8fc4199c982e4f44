import SpoolCore

/// An item's final outcome, told to the engine's observers (`EngineObserver.itemFinished`) once it is durable.
public struct ItemOutcomeEvent: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// Uploaded: deleted, or moved to done/.
        case uploaded
        /// Parked in failed/.
        case failed
    }

    public var kind: Kind
    public var id: ItemID
    public var originalName: String
    /// The last attempt's HTTP status; nil when there was none (network error, item unreadable).
    public var httpStatus: Int?
    public var size: Int64
    /// Why the item failed; nil for an upload.
    public var reason: String?

    public init(kind: Kind, id: ItemID, originalName: String, httpStatus: Int?, size: Int64, reason: String? = nil) {
        (self.kind, self.id, self.originalName) = (kind, id, originalName)
        (self.httpStatus, self.size, self.reason) = (httpStatus, size, reason)
    }
}
