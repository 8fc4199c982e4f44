/// A pending item as the queue orders it: when it is due, then its id.
///
/// An untried item (`.a0`) is due at its creation time (the time in its id); a tried one at its
/// next-attempt time (its json's mtime). Pending items go out in this order, so the oldest goes
/// first and a retry takes its place in line when its time comes. `attempt` names its files
/// (`pending/<id>.a<attempt>.json`).
public struct BacklogEntry: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var notBefore: Timestamp
    public var id: ItemID
    public var attempt: Int

    public init(notBefore: Timestamp, id: ItemID, attempt: Int) {
        (self.notBefore, self.id, self.attempt) = (notBefore, id, attempt)
    }

    public static func < (a: BacklogEntry, b: BacklogEntry) -> Bool {
        a.notBefore != b.notBefore ? a.notBefore < b.notBefore : a.id < b.id
    }

    /// Equal keys are the same place in line (an item has one entry at a time).
    public static func == (a: BacklogEntry, b: BacklogEntry) -> Bool {
        a.notBefore == b.notBefore && a.id == b.id
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(notBefore)
        hasher.combine(id)
    }

    public var description: String { "\(id).a\(attempt) due \(notBefore.iso8601)" }

    /// Where an untried item stands in line: its creation time, read from its id.
    public static func untried(_ id: ItemID) -> BacklogEntry {
        BacklogEntry(notBefore: id.createdAt ?? Timestamp(millisecondsSinceEpoch: 0), id: id, attempt: 0)
    }
}

/// The line format of a sorted run of backlog entries (`tmp/` scratch files, never synced):
/// `<notBefore ms> <attempt> <id>\n`, ASCII.
public enum BacklogRunCodec {
    public static func append(_ entry: BacklogEntry, to bytes: inout [UInt8]) {
        var id = entry.id.rawValue
        id.withUTF8 { append(notBefore: entry.notBefore.millisecondsSinceEpoch, attempt: entry.attempt, id: UnsafeRawBufferPointer($0), to: &bytes) }
    }

    /// The same line from its parts (a pass writes ids straight from the names it lists).
    public static func append(notBefore: Int64, attempt: Int, id: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        appendNumber(notBefore, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendNumber(Int64(attempt), to: &bytes)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: id)
        bytes.append(UInt8(ascii: "\n"))
    }

    private static func appendNumber(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(48 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// One line without its newline; nil when it is not one of ours.
    public static func decode(_ line: some Collection<UInt8>) -> BacklogEntry? {
        Array(line).withUnsafeBytes { decode($0) }
    }

    public static func decode(_ line: UnsafeRawBufferPointer) -> BacklogEntry? {
        guard let first = line.firstIndex(of: UInt8(ascii: " ")),
              let second = line[(first + 1)...].firstIndex(of: UInt8(ascii: " ")),
              let ms = number(UnsafeRawBufferPointer(rebasing: line[..<first])),
              let attempt = number(UnsafeRawBufferPointer(rebasing: line[(first + 1)..<second])),
              attempt >= 0, attempt <= Int64(ItemFileName.maximumAttempt)
        else { return nil }
        let idBytes = UnsafeRawBufferPointer(rebasing: line[(second + 1)...])
        guard ItemID.hasValidShape(idBytes) else { return nil }
        let id = ItemID(trusted: String(decoding: idBytes, as: UTF8.self))
        return BacklogEntry(notBefore: Timestamp(millisecondsSinceEpoch: ms), id: id, attempt: Int(attempt))
    }

    private static func number(_ digits: UnsafeRawBufferPointer) -> Int64? {
        var negative = false
        var value: Int64 = 0
        var count = 0
        for i in 0..<digits.count {
            let c = digits[i]
            if i == 0 && c == UInt8(ascii: "-") { negative = true; continue }
            guard c >= 48, c <= 57, count < 18 else { return nil }
            value = value * 10 + Int64(c - 48)
            count += 1
        }
        guard count > 0 else { return nil }
        return negative ? -value : value
    }
}
