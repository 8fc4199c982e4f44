/// A point in wall-clock time, in milliseconds since the Unix epoch.
///
/// The core keeps its own time type so it needs no Foundation: clocks are injected by the adapters.
public struct Timestamp: Hashable, Comparable, Sendable {
    public var millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    public init(secondsSinceEpoch: Double) {
        self.millisecondsSinceEpoch = Int64((secondsSinceEpoch * 1000).rounded())
    }

    public var secondsSinceEpoch: Double { Double(millisecondsSinceEpoch) / 1000 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch &+ milliseconds)
    }

    public func adding(seconds: Double) -> Timestamp {
        adding(milliseconds: Int64((seconds * 1000).rounded()))
    }

    /// Seconds from `self` until `later` (negative if `later` is earlier).
    public func seconds(until later: Timestamp) -> Double {
        Double(later.millisecondsSinceEpoch - millisecondsSinceEpoch) / 1000
    }
}

extension Timestamp {
    /// `2026-11-21T14:10:03.123Z`: the form used in item metadata and logs.
    public var iso8601: String {
        let c = CivilTime(self)
        guard (0...9999).contains(c.year) else {
            return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):"
                + "\(pad(c.second, 2)).\(pad(c.millisecond, 3))Z"
        }
        return fixedWidth(c, separated: true)
    }

    /// `20261121T141003123Z`: compact, filename-safe, sorts in time order.
    public var compact: String {
        let c = CivilTime(self)
        guard (0...9999).contains(c.year) else {
            return "\(pad(c.year, 4))\(pad(c.month, 2))\(pad(c.day, 2))T\(pad(c.hour, 2))\(pad(c.minute, 2))"
                + "\(pad(c.second, 2))\(pad(c.millisecond, 3))Z"
        }
        return fixedWidth(c, separated: false)
    }

    /// The digits of a time whose year has four, written straight into the string: both forms
    /// are made for every log line and several times per item, and the seven padded
    /// interpolations cost more than the calendar arithmetic.
    private func fixedWidth(_ c: CivilTime, separated: Bool) -> String {
        String(unsafeUninitializedCapacity: separated ? 24 : 19) { bytes in
            var i = 0
            func put(_ value: Int, _ width: Int) {
                var rest = value
                for k in stride(from: width - 1, through: 0, by: -1) {
                    bytes[i + k] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                    rest /= 10
                }
                i += width
            }
            func mark(_ character: Unicode.Scalar, always: Bool = false) {
                guard separated || always else { return }
                bytes[i] = UInt8(ascii: character)
                i += 1
            }
            put(c.year, 4); mark("-"); put(c.month, 2); mark("-"); put(c.day, 2); mark("T", always: true)
            put(c.hour, 2); mark(":"); put(c.minute, 2); mark(":"); put(c.second, 2); mark(".")
            put(c.millisecond, 3); mark("Z", always: true)
            return i
        }
    }

    /// Parses the `iso8601` form (fraction optional, `Z` required).
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58,
              let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2),
              let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2)
        else { return nil }
        var ms = 0
        var i = 19
        if b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { ms = ms * 10 + Int(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { ms *= 10 } }
        }
        guard i == b.count - 1, b[i] == 90, (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        self = CivilTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms).timestamp
    }
}

private func pad(_ value: Int, _ width: Int) -> String {
    let s = String(value)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}
