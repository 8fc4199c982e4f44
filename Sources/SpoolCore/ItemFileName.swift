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

    /// What `init(parsing:)` reads from a name, taken from its bytes without making a string: the
    /// length of the id at its start, the attempt and the kind. For a pass over a folder of a
    /// million names, where only some become items.
    public struct Shape: Equatable, Sendable {
        public var idLength: Int
        public var attempt: Int
        public var kind: Kind
    }

    public static func shape(of name: UnsafeRawBufferPointer) -> Shape? {
        let count = name.count
        guard count > 26 else { return nil }
        let kind: Kind
        if name[count - 5] == UInt8(ascii: "."), name[count - 4] == UInt8(ascii: "j"), name[count - 3] == UInt8(ascii: "s"),
           name[count - 2] == UInt8(ascii: "o"), name[count - 1] == UInt8(ascii: "n") { kind = .json }
        else if name[count - 5] == UInt8(ascii: "."), name[count - 4] == UInt8(ascii: "b"), name[count - 3] == UInt8(ascii: "l"),
                name[count - 2] == UInt8(ascii: "o"), name[count - 1] == UInt8(ascii: "b") { kind = .blob }
        else { return nil }
        var i = count - 5
        var attempt = 0
        var scale = 1
        var digits = 0
        while i > 0, name[i - 1] >= 48, name[i - 1] <= 57 {
            digits += 1
            guard digits <= 4 else { return nil }
            attempt += Int(name[i - 1] - 48) * scale
            scale *= 10
            i -= 1
        }
        guard digits > 0, !(digits > 1 && name[i] == UInt8(ascii: "0")), i >= 2,
              name[i - 1] == UInt8(ascii: "a"), name[i - 2] == UInt8(ascii: ".")
        else { return nil }
        let idLength = i - 2
        guard ItemID.hasValidShape(UnsafeRawBufferPointer(rebasing: name[0..<idLength])) else { return nil }
        return Shape(idLength: idLength, attempt: attempt, kind: kind)
    }

    public var sibling: ItemFileName {
        ItemFileName(id: id, attempt: attempt, kind: kind == .json ? .blob : .json)
    }
}
