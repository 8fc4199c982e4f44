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
        if let fast = bytes.withContiguousStorageIfAvailable({ hasValidShape(UnsafeRawBufferPointer($0)) }) { return fast }
        return Array(bytes).withUnsafeBytes { hasValidShape($0) }
    }

    static func hasValidShape(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count >= 20, count <= maximumLength, bytes[8] == UInt8(ascii: "T"), bytes[18] == UInt8(ascii: "Z") else { return false }
        for i in 0..<18 where i != 8 {
            guard bytes[i] &- 48 < 10 else { return false }
        }
        var previous: UInt8 = 0
        for i in 19..<count {
            let c = bytes[i]
            guard isSafe(c), !(c == UInt8(ascii: ".") && previous == UInt8(ascii: ".")) else { return false }
            previous = c
        }
        return true
    }

    public var description: String { rawValue }

    /// An id whose shape the caller has just checked (`hasValidShape` on its bytes).
    init(trusted rawValue: String) { self.rawValue = rawValue }

    /// The creation time in the id's first 18 digits (`20261121T141003123Z`).
    public var createdAt: Timestamp? {
        var text = rawValue
        return text.withUTF8 { ItemID.createdAt(UnsafeRawBufferPointer($0)) }
    }

    /// The creation time in the first 18 bytes of an id (its text or the bytes of a file name).
    public static func createdAt(_ bytes: UnsafeRawBufferPointer) -> Timestamp? {
        guard bytes.count >= 18 else { return nil }
        var value = (year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, millisecond: 0)
        var count = 0
        for i in 0..<18 {
            if i == 8 { continue }
            let c = bytes[i]
            guard c >= 48, c <= 57 else { return nil }
            let d = Int(c) - 48
            switch i {
            case 0..<4: value.year = value.year * 10 + d
            case 4..<6: value.month = value.month * 10 + d
            case 6..<8: value.day = value.day * 10 + d
            case 9..<11: value.hour = value.hour * 10 + d
            case 11..<13: value.minute = value.minute * 10 + d
            case 13..<15: value.second = value.second * 10 + d
            default: value.millisecond = value.millisecond * 10 + d
            }
            count += 1
        }
        guard count == 17 else { return nil }
        return CivilTime(year: value.year, month: value.month, day: value.day, hour: value.hour, minute: value.minute,
                         second: value.second, millisecond: value.millisecond).timestamp
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
