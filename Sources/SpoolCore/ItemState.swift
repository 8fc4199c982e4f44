/// The folder an item sits in: its state is where it is.
public enum ItemState: String, CaseIterable, Sendable, Comparable {
    case pending
    case inflight
    case failed
    case done

    /// Terminal states are never claimed again without an operator's `retry`.
    public var isTerminal: Bool { self == .failed || self == .done }

    private var order: Int {
        switch self {
        case .pending: 0
        case .inflight: 1
        case .failed: 2
        case .done: 3
        }
    }

    public static func < (lhs: ItemState, rhs: ItemState) -> Bool { lhs.order < rhs.order }
}
