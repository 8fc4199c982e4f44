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

    /// Parses a directory entry; `nil` for anything that is not one of ours. Works on the bytes
    /// from the end (`.json`/`.blob`, then `.a<N>`), since it runs for every file of a spool.
    public init?(parsing name: String) {
        let b = name.utf8
        guard b.count > 26 else { return nil }  // shortest id (20) + ".a0" + ".json"
        var end = b.endIndex
        func back(_ n: Int) -> String.UTF8View.Index { b.index(end, offsetBy: -n) }
        let kind: Kind
        if b[back(5)...].elementsEqual(".json".utf8) { kind = .json }
        else if b[back(5)...].elementsEqual(".blob".utf8) { kind = .blob }
        else { return nil }
        end = back(5)
        // Digits of the attempt, then "a", then ".".
        var attempt = 0
        var digits = 0
        var scale = 1
        var i = end
        while i > b.startIndex {
            let previous = b.index(before: i)
            let c = b[previous]
            guard c >= 48, c <= 57 else { break }
            digits += 1
            guard digits <= 4 else { return nil }
            attempt += Int(c - 48) * scale
            scale *= 10
            i = previous
        }
        guard digits > 0 else { return nil }
        if digits > 1, b[i] == UInt8(ascii: "0") { return nil }  // no leading zeros: one name per attempt
        guard i > b.startIndex else { return nil }
        let a = b.index(before: i)
        guard b[a] == UInt8(ascii: "a"), a > b.startIndex else { return nil }
        let dot = b.index(before: a)
        guard b[dot] == UInt8(ascii: "."),
              let idText = String(b[b.startIndex..<dot]), let id = ItemID(idText)
        else { return nil }
        (self.id, self.attempt, self.kind) = (id, attempt, kind)
    }

    public var description: String { "\(id.rawValue).a\(attempt).\(kind.rawValue)" }

    public var sibling: ItemFileName {
        ItemFileName(id: id, attempt: attempt, kind: kind == .json ? .blob : .json)
    }
}
