/// Where a file of an item can be found: a state folder, or spoold's staging folder `tmp/`.
public enum SpoolPlace: Hashable, Sendable, CustomStringConvertible {
    case state(ItemState)
    case tmp

    public var description: String {
        switch self {
        case .state(let s): s.rawValue
        case .tmp: "tmp"
        }
    }
}
