import SpoolCore

/// A file to turn into an item: where its bytes come from and its metadata (which holds its id).
public struct NewItem: Sendable {
    public enum Source: Sendable, Equatable {
        /// A name in `incoming/`: renamed in when possible (same file system, one link).
        case incoming(String)
        /// A path given to `spoold enqueue`: copied, or renamed with `--move`.
        case external(path: String, move: Bool)

        /// `incoming/NAME` or the path given, for messages.
        public var label: String {
            switch self {
            case .incoming(let name): "incoming/\(name)"
            case .external(let path, _): path
            }
        }
    }

    public var source: Source
    public var metadata: ItemMetadata
    /// `pending` normally; `failed` for an item quarantined on arrival (a malformed sidecar).
    public var state: ItemState

    public init(source: Source, metadata: ItemMetadata, state: ItemState = .pending) {
        precondition(state == .pending || state == .failed, "new items start pending or failed")
        self.source = source
        self.metadata = metadata
        self.state = state
    }

    public var id: ItemID {
        guard let id = ItemID(metadata.id) else { preconditionFailure("metadata id \(metadata.id) is not an ItemID") }
        return id
    }
}

/// What became of one new item.
public enum AddResult: Equatable, Sendable {
    case added(ItemID)
    /// Not taken, left where it was: `reason` says why (not a regular file, unreadable...).
    case rejected(String)
}
