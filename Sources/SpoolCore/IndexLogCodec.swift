/// Framing of the write-ahead index file `SPOOL/index.wal`: one record per line, readable with `cat`.
///
///     R <len> <crc> <payload>\n
///
/// - `<len>`: decimal byte count of the UTF-8 payload, 1...4096, no leading zeros.
/// - `<crc>`: exactly 8 lowercase hex digits of `CRC32C.checksum(payload)`.
/// - `<payload>`: `IndexRecord.description`, or the header text; never empty, no `\n`, no NUL.
///
/// The file starts with a header line framed the same way, payload `spoold-index 1`.
///
/// ## How `decode` reads a file
/// The file is cut into lines at `\n`. A record can only start at offset 0 or right after a `\n`,
/// and a *valid frame* is a whole line, including its `\n`, that matches the format above exactly:
/// the line's length must equal what `<len>` announces and the checksum must match. A last line
/// without its `\n` is never valid: the write that held it did not finish.
///
/// A *good record* is a valid frame whose payload parses as an `IndexRecord` and prints back to
/// the same bytes (so only canonical payloads are accepted). Good records are taken in order from
/// just after the header up to the first line that is not a good record: the *bad spot*.
///
/// Damage is then classified by scanning the lines from the bad spot (inclusive) to the end:
/// - no bad spot: `.none`;
/// - some line at or after the bad spot is a valid frame: `.corruptMiddle(offset: badSpot)`;
/// - otherwise: `.tornTail(offset: badSpot, length: count - badSpot)`.
///
/// ## Decisions
/// - **A valid frame whose payload does not parse** (an operation from a newer version, a second
///   header, a hand-edited line with a fixed-up checksum) is a bad record, *and* it counts as a
///   valid frame for the scan, so it is never called a torn tail, even as the last line. A crash
///   cannot write a matching CRC-32C by accident (odds 2⁻³²), so such a line was written on
///   purpose by someone; truncating it would destroy it. The result is `.corruptMiddle`: the
///   caller sets the file aside (keeps it) and rebuilds from the directories.
/// - **An empty file** is a fresh log: zero records, `validLength` 0, damage `.none`, `version`
///   nil. The caller writes the header and carries on.
/// - **No valid header at offset 0**: damaged at offset 0 (`validLength` 0, no records). It is a
///   torn tail when nothing in the file is a valid frame (a crash while the file was being
///   created, or a file of zeros): truncate to 0 and write a new header. When a valid frame exists
///   anywhere (header missing but records present, or a header of an unknown version) it is
///   `.corruptMiddle(offset: 0)`: set aside and rebuild.
/// - **Header of another version** (`spoold-index 2`): `version` reports 2, nothing is decoded,
///   damage `.corruptMiddle(offset: 0)` by the rule above, so a newer file is never truncated.
///
/// `decode` runs in linear time: each line is found once, and the checksum is only computed for
/// lines whose length already agrees with their `<len>`.
public enum IndexLogCodec {
    public static let headerPayload = "spoold-index 1"
    /// The format version this code writes and reads.
    public static let version = 1
    /// Largest payload, in bytes.
    public static let maximumPayloadLength = 4096

    public static func encodeHeader() -> [UInt8] {
        encode(payload: headerPayload)
    }

    public static func encode(_ record: IndexRecord) -> [UInt8] {
        encode(payload: record.description)
    }

    /// Frames one payload. The payload must be 1...4096 UTF-8 bytes without `\n` or NUL; anything
    /// else is a programming error and traps (an `IndexRecord` always qualifies).
    public static func encode(payload: String) -> [UInt8] {
        let body = Array(payload.utf8)
        precondition(isFramable(body[...]), "index payload must be 1...4096 bytes without newline or NUL")
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 20)
        out.append(letterR)
        out.append(space)
        out.append(contentsOf: String(body.count).utf8)
        out.append(space)
        let crc = CRC32C.checksum(body)
        for shift in stride(from: 28, through: 0, by: -4) {
            out.append(hexDigits[Int((crc >> UInt32(shift)) & 0xF)])
        }
        out.append(space)
        out.append(contentsOf: body)
        out.append(newline)
        return out
    }

    /// Reads a whole index file. Never traps, on any input; see the type's documentation.
    public static func decode(_ bytes: [UInt8]) -> IndexLogScan {
        bytes.withUnsafeBufferPointer { decode(buffer: $0) }
    }

    private static func decode(buffer b: UnsafeBufferPointer<UInt8>) -> IndexLogScan {
        let count = b.count
        if count == 0 { return IndexLogScan(records: [], validLength: 0, damage: .none, version: nil) }

        var lines = LineCursor(buffer: b)
        var version: Int?
        var records: [IndexRecord] = []
        var badSpot: Int?

        // Header.
        if let line = lines.next(), let payload = frame(b, line) {
            version = headerVersion(b, payload)
            if version != IndexLogCodec.version { badSpot = 0 }
        } else {
            badSpot = 0
        }

        // Records, up to the first bad spot.
        if badSpot == nil {
            while let line = lines.next() {
                if let payload = frame(b, line), let record = parseRecord(b, payload) {
                    records.append(record)
                } else {
                    badSpot = line.start
                    break
                }
            }
        }

        guard let bad = badSpot else {
            return IndexLogScan(records: records, validLength: count, damage: .none, version: version)
        }

        // Damage: is there any valid frame from the bad spot (inclusive) on?
        var scan = LineCursor(buffer: b, from: bad)
        while let line = scan.next() {
            if frame(b, line) != nil {
                return IndexLogScan(records: records, validLength: bad, damage: .corruptMiddle(offset: bad), version: version)
            }
        }
        return IndexLogScan(
            records: records, validLength: bad, damage: .tornTail(offset: bad, length: count - bad), version: version)
    }

    // MARK: - Lines and frames

    /// One line: `start..<end` excludes the `\n`; `terminated` tells whether a `\n` follows.
    private struct Line {
        var start: Int
        var end: Int
        var terminated: Bool
    }

    private struct LineCursor {
        let buffer: UnsafeBufferPointer<UInt8>
        var position: Int

        init(buffer: UnsafeBufferPointer<UInt8>, from position: Int = 0) {
            self.buffer = buffer
            self.position = position
        }

        mutating func next() -> Line? {
            let count = buffer.count
            guard position < count else { return nil }
            let start = position
            var i = start
            while i < count, buffer[i] != IndexLogCodec.newline { i += 1 }
            if i < count {
                position = i + 1
                return Line(start: start, end: i, terminated: true)
            }
            position = count
            return Line(start: start, end: count, terminated: false)
        }
    }

    /// The payload range of `line` if it is a valid frame, else nil.
    private static func frame(_ b: UnsafeBufferPointer<UInt8>, _ line: Line) -> Range<Int>? {
        guard line.terminated else { return nil }
        let end = line.end
        var i = line.start
        // "R "
        guard end - i >= 14, b[i] == letterR, b[i + 1] == space else { return nil }
        i += 2
        // <len>: 1...4 digits, no leading zero, 1...4096.
        let lengthStart = i
        var length = 0
        while i < end, i - lengthStart < 5, let d = decimalValue(b[i]) {
            length = length * 10 + d
            i += 1
        }
        let digits = i - lengthStart
        guard digits >= 1, digits <= 4, b[lengthStart] != zero, length <= maximumPayloadLength else { return nil }
        // " <crc> "
        guard end - i >= 10, b[i] == space else { return nil }
        i += 1
        var crc: UInt32 = 0
        for k in 0..<8 {
            guard let h = lowercaseHexValue(b[i + k]) else { return nil }
            crc = crc << 4 | UInt32(h)
        }
        i += 8
        guard b[i] == space else { return nil }
        i += 1
        // <payload> fills the rest of the line exactly.
        guard end - i == length else { return nil }
        let payload = UnsafeBufferPointer(rebasing: b[i..<end])
        guard isFramable(payload[...]), CRC32C.checksum(payload) == crc else { return nil }
        return i..<end
    }

    private static func isFramable<C: Collection>(_ payload: C) -> Bool where C.Element == UInt8 {
        let n = payload.count
        return n >= 1 && n <= maximumPayloadLength && !payload.contains(where: { $0 == newline || $0 == 0 })
    }

    private static func parseRecord(_ b: UnsafeBufferPointer<UInt8>, _ payload: Range<Int>) -> IndexRecord? {
        // The strict parser accepts only canonical payloads, so no re-printing is needed.
        IndexRecord(payloadBytes: UnsafeBufferPointer(rebasing: b[payload]))
    }

    /// The version of a header payload `spoold-index <n>` (`n` decimal, no leading zero); nil if
    /// the payload is not a header.
    private static func headerVersion(_ b: UnsafeBufferPointer<UInt8>, _ payload: Range<Int>) -> Int? {
        let prefix = Array("spoold-index ".utf8)
        let bytes = UnsafeBufferPointer(rebasing: b[payload])
        guard bytes.count > prefix.count, bytes.count <= prefix.count + 9,
              bytes.prefix(prefix.count).elementsEqual(prefix),
              bytes[prefix.count] != zero
        else { return nil }
        var n = 0
        for c in bytes.dropFirst(prefix.count) {
            guard let d = decimalValue(c) else { return nil }
            n = n * 10 + d
        }
        return n
    }

    // MARK: - Bytes

    private static let letterR = UInt8(ascii: "R")
    private static let space = UInt8(ascii: " ")
    private static let newline = UInt8(ascii: "\n")
    private static let zero = UInt8(ascii: "0")
    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func decimalValue(_ c: UInt8) -> Int? {
        c >= 48 && c <= 57 ? Int(c - 48) : nil
    }

    private static func lowercaseHexValue(_ c: UInt8) -> Int? {
        if c >= 48 && c <= 57 { return Int(c - 48) }
        if c >= 97 && c <= 102 { return Int(c - 87) }
        return nil
    }
}

/// What `IndexLogCodec.decode` found in an index file.
public struct IndexLogScan: Equatable, Sendable {
    /// Good records in order, before any damage.
    public var records: [IndexRecord]
    /// Byte offset just after the last good record (0 if no valid header).
    public var validLength: Int
    public var damage: Damage
    /// The version announced by a checksum-valid header line at offset 0, even one this code
    /// cannot read; nil when there is no such header (including an empty file).
    public var version: Int?

    public enum Damage: Equatable, Sendable {
        case none
        /// Bytes after validLength that hold no further valid record: a torn/zero/garbage tail, the
        /// normal result of a crash. Truncate to validLength and carry on.
        case tornTail(offset: Int, length: Int)
        /// A bad record at `offset` followed later by at least one valid record: corruption in the
        /// middle. Set the file aside and rebuild from the directories. Also reported when the bad
        /// record is itself a checksum-valid frame that does not parse (see `IndexLogCodec`).
        case corruptMiddle(offset: Int)
    }

    public init(records: [IndexRecord], validLength: Int, damage: Damage, version: Int?) {
        self.records = records
        self.validLength = validLength
        self.damage = damage
        self.version = version
    }
}
