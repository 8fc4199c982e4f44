/// One of the two files of an item: `<id>.a<N>.json` (metadata) or `<id>.a<N>.blob` (payload).
///
/// `N` is the number of attempts made so far (in `inflight/`, counting the one in progress).
public struct ItemFileName: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case json, blob }

    public var id: ItemID
    public var attempt: Int
    public var kind: Kind

    public static let maximumAttempt = 9_999

    public init(id: ItemID, attempt: Int, kind: Kind) {
        precondition(attempt >= 0 && attempt <= ItemFileName.maximumAttempt, "attempt out of range")
        (self.id, self.attempt, self.kind) = (id, attempt, kind)
    }

    /// Parses a directory entry; `nil` for anything that is not one of ours.
    public init?(parsing name: String) {
        let kind: Kind
        if name.hasSuffix(".json") { kind = .json } else if name.hasSuffix(".blob") { kind = .blob } else { return nil }
        let stem = name.dropLast(5)
        guard let dotA = stem.lastIndex(of: "."), stem[stem.index(after: dotA)...].first == "a" else { return nil }
        let digits = stem[stem.index(dotA, offsetBy: 2)...]
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              digits.count == 1 || digits.first != "0",
              let attempt = Int(digits), let id = ItemID(String(stem[..<dotA]))
        else { return nil }
        (self.id, self.attempt, self.kind) = (id, attempt, kind)
    }

    public var description: String { "\(id.rawValue).a\(attempt).\(kind.rawValue)" }

    public var sibling: ItemFileName {
        ItemFileName(id: id, attempt: attempt, kind: kind == .json ? .blob : .json)
    }
}
