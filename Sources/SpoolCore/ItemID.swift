/// The unique name of one spooled item, e.g. `20261121T141003123Z-0000-9f3ab2c1-photo.jpg`.
///
/// Sorts in enqueue order (time first, then a per-process counter), is safe in a file name, and
/// carries a sanitised hint of the original name so `ls` is readable. It is also the item's
/// `Idempotency-Key`, identical on every attempt.
public struct ItemID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Longest id we accept from disk; longer names are not ours.
    public static let maximumLength = 120
    /// Longest name hint carried inside a new id.
    public static let maximumHintLength = 48

    /// Accepts a name read back from disk only if it has the id's shape (and so is safe to use
    /// in a path): `[0-9]{8}T[0-9]{9}Z-` prefix, then `[A-Za-z0-9._-]`, no leading dot, no `..`.
    public init?(_ rawValue: String) {
        guard ItemID.hasValidShape(rawValue.utf8) else { return nil }
        self.rawValue = rawValue
    }

    /// One pass over the bytes: this runs for every file name listed and every index record read,
    /// so it allocates nothing and never falls back to a generic substring search.
    static func hasValidShape(_ bytes: String.UTF8View) -> Bool {
        var count = 0
        var previous: UInt8 = 0
        for c in bytes {
            switch count {
            case 8: guard c == UInt8(ascii: "T") else { return false }
            case 18: guard c == UInt8(ascii: "Z") else { return false }
            case 0..<18: guard c >= 48, c <= 57 else { return false }
            default:
                guard isSafe(c), !(c == UInt8(ascii: ".") && previous == UInt8(ascii: ".")) else { return false }
            }
            previous = c
            count += 1
            if count > maximumLength { return false }
        }
        return count >= 20
    }

    public var description: String { rawValue }

    /// The creation time in the id's first 18 digits (`20261121T141003123Z`).
    public var createdAt: Timestamp? {
        var digits: [Int] = []
        digits.reserveCapacity(17)
        for (i, c) in rawValue.utf8.prefix(18).enumerated() where i != 8 { digits.append(Int(c) - 48) }
        guard digits.count == 17 else { return nil }
        func n(_ from: Int, _ count: Int) -> Int { digits[from..<(from + count)].reduce(0) { $0 * 10 + $1 } }
        return CivilTime(year: n(0, 4), month: n(4, 2), day: n(6, 2), hour: n(8, 2), minute: n(10, 2),
                         second: n(12, 2), millisecond: n(14, 3)).timestamp
    }

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.rawValue < rhs.rawValue }

    static func isSafe(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 46 || c == 95
    }

    /// Reduces an arbitrary file name to the characters allowed in an id: unsafe bytes become
    /// `_`, runs of `_` collapse, dots never lead or repeat, and the result is capped.
    public static func sanitizedHint(_ name: String) -> String {
        var out: [UInt8] = []
        for c in name.utf8 {
            var ch = isSafe(c) ? c : UInt8(ascii: "_")
            if ch == UInt8(ascii: "."), out.last == UInt8(ascii: ".") { ch = UInt8(ascii: "_") }
            if ch == UInt8(ascii: "_"), out.last == UInt8(ascii: "_") { continue }
            out.append(ch)
            if out.count >= maximumHintLength { break }
        }
        while let first = out.first, first == UInt8(ascii: ".") || first == UInt8(ascii: "_") || first == UInt8(ascii: "-") {
            out.removeFirst()
        }
        while let last = out.last, last == UInt8(ascii: ".") || last == UInt8(ascii: "_") { out.removeLast() }
        return String(decoding: out, as: UTF8.self)
    }
}
