/// Where an item's pair of files sits: a state folder and the attempt number in their names.
///
/// Written as `pending.a0` in index records, matching `pending/<id>.a0.json` on disk.
public struct ItemLocation: Hashable, Sendable, CustomStringConvertible {
    public var state: ItemState
    public var attempt: Int

    public init(_ state: ItemState, attempt: Int) {
        self.state = state
        self.attempt = attempt
    }

    public var description: String { "\(state.rawValue).a\(attempt)" }

    public init?(parsing text: Substring) {
        guard let dot = text.firstIndex(of: "."), let state = ItemState(rawValue: String(text[..<dot])) else {
            return nil
        }
        let rest = text[text.index(after: dot)...]
        guard rest.first == "a", rest.count >= 2, rest.count <= 5,
              let attempt = Int(rest.dropFirst()), attempt >= 0, String(attempt) == rest.dropFirst()
        else { return nil }
        self.init(state, attempt: attempt)
    }

    /// Position in an item's life, used when a crash left its files in two places: the furthest
    /// one wins. The life is pending.a0 → inflight.a1 → pending.a1 → … → failed.aN or done.aN;
    /// terminal states rank above everything with the same attempt count.
    public var progressRank: Int {
        switch state {
        case .inflight: attempt * 5 - 2
        case .pending: attempt * 5
        case .failed: attempt * 5 + 1
        case .done: attempt * 5 + 2
        }
    }
}
