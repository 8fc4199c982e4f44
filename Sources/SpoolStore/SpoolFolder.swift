import SpoolCore

/// The folders of a spool. Their names are the public on-disk protocol and exist only here.
public enum SpoolFolder: String, CaseIterable, Sendable {
    /// The drop zone: writers put files here (under a dot-name, then rename).
    case incoming
    case pending
    case inflight
    case failed
    /// Only with `--keep-done`.
    case done
    /// spoold's private staging; anything left here at start-up is an orphan or half an item.
    case tmp

    public init(_ state: ItemState) {
        switch state {
        case .pending: self = .pending
        case .inflight: self = .inflight
        case .failed: self = .failed
        case .done: self = .done
        }
    }

    /// The folder of a place recovery names: tmp/ or a state's folder.
    init(_ place: SpoolPlace) {
        switch place {
        case .tmp: self = .tmp
        case .state(let state): self.init(state)
        }
    }

    /// The item state this folder holds, if it is a state folder.
    public var state: ItemState? {
        switch self {
        case .pending: .pending
        case .inflight: .inflight
        case .failed: .failed
        case .done: .done
        case .incoming, .tmp: nil
        }
    }

    /// The write-ahead index, beside the folders.
    public static let indexFileName = "index.wal"
    /// Held with flock(2) by the one daemon (`run` or `drain`) working on a spool.
    public static let lockFileName = "spoold.lock"
    /// Where recovery sets aside entries it cannot use but must not delete (a folder named like an
    /// item file, a FIFO in tmp/): created when first needed, never read by spoold (Postfix's
    /// `corrupt` queue). Not a state folder: nothing in it is an item.
    public static let corruptFolderName = "corrupt"
    /// Where `ReceivedRequest`-style sidecars live: `incoming/<name>.meta.json`.
    public static let sidecarSuffix = ".meta.json"
}
