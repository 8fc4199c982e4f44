/// File names as the kernel has them (bytes) carried in Swift `String`s without loss.
///
/// A name that is valid UTF-8 is its own string. A byte that is not part of valid UTF-8 becomes
/// the private-use scalar U+10FF00 + byte, and so do the bytes of a name's own U+10FFxx scalars,
/// so that every string `decode` makes goes back to exactly its bytes through `encode`. Every
/// call of `PosixFileSystem` that takes a name encodes it; `list` and inotify decode.
public enum FileName {
    private static let escapeBase: UInt32 = 0x10FF00

    /// The string for a name's bytes (no NUL inside).
    public static func decode(_ bytes: some Collection<UInt8>) -> String {
        if !bytes.contains(0xF4), let plain = String(validating: bytes, as: UTF8.self) { return plain }
        let bytes = Array(bytes)
        var scalars = String.UnicodeScalarView()
        var i = 0
        while i < bytes.count {
            if let length = validScalarLength(bytes, at: i),
               let scalar = String(decoding: bytes[i..<(i + length)], as: UTF8.self).unicodeScalars.first,
               scalar.value < escapeBase
            {
                scalars.append(scalar)
                i += length
            } else {
                scalars.append(Unicode.Scalar(escapeBase + UInt32(bytes[i]))!)
                i += 1
            }
        }
        return String(scalars)
    }

    /// The bytes of a name made by `decode` (or any string: plain UTF-8 when nothing is escaped).
    public static func encode(_ name: String) -> [UInt8] {
        guard isEscaped(name) else { return Array(name.utf8) }
        var out: [UInt8] = []
        for scalar in name.unicodeScalars {
            if scalar.value >= escapeBase { out.append(UInt8(scalar.value - escapeBase)) } else { out += Array(String(scalar).utf8) }
        }
        return out
    }

    /// Whether the name's bytes are not valid UTF-8 as they stand (it holds escaped bytes).
    /// Asked for every name of every system call: the 0xF4 lead byte is looked for in the
    /// string's contiguous UTF-8 (the generic `UTF8View.contains` was ~0.5 % of the CPU per item).
    public static func isEscaped(_ name: String) -> Bool {
        let mayBe = name.utf8.withContiguousStorageIfAvailable { $0.contains(0xF4) } ?? name.utf8.contains(0xF4)
        return mayBe && name.unicodeScalars.contains { $0.value >= escapeBase }
    }

    /// A readable, valid form for a name whose bytes are not UTF-8: each escaped byte as `\xNN`.
    public static func display(_ name: String) -> String {
        guard isEscaped(name) else { return name }
        let hex = Array("0123456789ABCDEF")
        var out = ""
        for scalar in name.unicodeScalars {
            if scalar.value >= escapeBase {
                let byte = Int(scalar.value - escapeBase)
                out += "\\x" + String(hex[byte >> 4]) + String(hex[byte & 15])
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Runs `body` with the name as a NUL-terminated C string of its bytes.
    public static func withCString<T>(_ name: String, _ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
        guard isEscaped(name) else { return try name.withCString(body) }
        let bytes = encode(name).map { CChar(bitPattern: $0) } + [0]
        return try bytes.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    /// The length of the valid UTF-8 sequence starting at `i` (RFC 3629 table), or nil.
    private static func validScalarLength(_ bytes: [UInt8], at i: Int) -> Int? {
        let lead = bytes[i]
        if lead < 0x80 { return 1 }
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return nil
        }
        guard i + length <= bytes.count, (low...high).contains(bytes[i + 1]) else { return nil }
        for k in 2..<length where !(0x80...0xBF).contains(bytes[i + k]) { return nil }
        return length
    }
}
