/// Finds the value at a dot path in a JSON document (RFC 8259), over its bytes, validating the
/// whole document on the way.
///
/// Written for answers from a server we do not trust: no tree is built (only the value at the
/// path is kept), nesting is capped at `maximumDepth` so a hostile answer cannot exhaust the
/// stack, and anything that is not strict JSON (trailing commas, comments, invalid UTF-8, a
/// second document) is an error. A UTF-8 byte-order mark at the start is skipped. With duplicate
/// keys the last one wins.
public struct JSONPathReader {
    public static let maximumDepth = 64

    /// What the document holds at the path.
    public enum Found: Equatable, Sendable {
        case scalar(JSONScalar)
        case object
        case array
        /// A key or index on the way does not exist, or a scalar is in the way.
        case missing
    }

    /// Why the bytes are not JSON, and where.
    public struct SyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
        public var problem: String
        public var offset: Int
        public var description: String { "\(problem) at byte \(offset)" }
    }

    /// The value at `path` (keys; a segment of digits also indexes an array) in `bytes`.
    public static func value(at path: [String], in bytes: [UInt8]) throws(SyntaxError) -> Found {
        var reader = JSONPathReader(bytes: bytes, path: path.map { Array($0.utf8) })
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.position = 3 }
        reader.skipSpace()
        try reader.value(depth: 0, matched: 0)
        reader.skipSpace()
        guard reader.position == bytes.count else { throw reader.error("text after the JSON value") }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw SyntaxError(problem: "invalid UTF-8", offset: 0)
        }
        return reader.found
    }

    private let bytes: [UInt8]
    private let path: [[UInt8]]
    private var position = 0
    private var found = Found.missing

    private init(bytes: [UInt8], path: [[UInt8]]) {
        self.bytes = bytes
        self.path = path
    }

    private func error(_ problem: String) -> SyntaxError { SyntaxError(problem: problem, offset: position) }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(SyntaxError) {
        guard current == byte else { throw error("expected \(what)") }
        position += 1
    }

    /// Parses one value; `matched` path segments lead here, so the value is the target when
    /// `matched == path.count`, and on the way to it when a container's member matches the next.
    private mutating func value(depth: Int, matched: Int?) throws(SyntaxError) {
        let isTarget = matched == path.count
        guard let byte = current else { throw error("unexpected end of the answer") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < JSONPathReader.maximumDepth else { throw error("nested deeper than \(JSONPathReader.maximumDepth)") }
            if isTarget { found = .object }
            try object(depth: depth + 1, matched: isTarget ? nil : matched)
        case UInt8(ascii: "["):
            guard depth < JSONPathReader.maximumDepth else { throw error("nested deeper than \(JSONPathReader.maximumDepth)") }
            if isTarget { found = .array }
            try array(depth: depth + 1, matched: isTarget ? nil : matched)
        case UInt8(ascii: "\""):
            let text = try string()
            if isTarget { found = .scalar(.string(text)) }
        case UInt8(ascii: "t"):
            try literal("true")
            if isTarget { found = .scalar(.bool(true)) }
        case UInt8(ascii: "f"):
            try literal("false")
            if isTarget { found = .scalar(.bool(false)) }
        case UInt8(ascii: "n"):
            try literal("null")
            if isTarget { found = .scalar(.null) }
        default:
            let number = try self.number()
            if isTarget { found = .scalar(.number(number)) }
        }
    }

    private mutating func object(depth: Int, matched: Int?) throws(SyntaxError) {
        position += 1
        skipSpace()
        if current == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try string()
            var memberMatched: Int? = nil
            if let matched, matched < path.count, key.utf8.elementsEqual(path[matched]) { memberMatched = matched + 1 }
            skipSpace()
            try expect(UInt8(ascii: ":"), "':' after a key")
            skipSpace()
            try value(depth: depth, matched: memberMatched)
            skipSpace()
            if current == UInt8(ascii: ",") {
                position += 1
                skipSpace()
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            return
        }
    }

    private mutating func array(depth: Int, matched: Int?) throws(SyntaxError) {
        position += 1
        skipSpace()
        if current == UInt8(ascii: "]") {
            position += 1
            return
        }
        var wanted: Int? = nil
        if let matched, matched < path.count, let index = JSONPathReader.index(path[matched]) { wanted = index }
        var index = 0
        while true {
            try value(depth: depth, matched: index == wanted ? matched! + 1 : nil)
            index += 1
            skipSpace()
            if current == UInt8(ascii: ",") {
                position += 1
                skipSpace()
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return
        }
    }

    /// A path segment of decimal digits (no sign, no leading zero unless "0") as an array index.
    private static func index(_ segment: [UInt8]) -> Int? {
        guard !segment.isEmpty, segment.count <= 9, segment.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              segment.count == 1 || segment[0] != 0x30
        else { return nil }
        return segment.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private mutating func literal(_ word: StaticString) throws(SyntaxError) {
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected in
            position + count <= bytes.count && bytes[position..<(position + count)].elementsEqual(expected)
        }
        guard matches else { throw error("invalid literal") }
        position += count
    }

    private mutating func number() throws(SyntaxError) -> Double {
        let start = position
        func digits() -> Int {
            let from = position
            while let byte = current, byte >= 0x30 && byte <= 0x39 { position += 1 }
            return position - from
        }
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else {
            guard digits() > 0 else { throw SyntaxError(problem: "invalid value", offset: start) }
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw error("expected a digit") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw error("expected a digit") }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw SyntaxError(problem: "number out of range", offset: start) }
        return value
    }

    /// A string literal, decoded; `position` is on its opening quote.
    private mutating func string() throws(SyntaxError) -> String {
        position += 1
        var scalars = String.UnicodeScalarView()
        var runStart = position
        func flushRun(_ end: Int) {
            if end > runStart { scalars.append(contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).unicodeScalars) }
        }
        while true {
            guard let byte = current else { throw error("unterminated string") }
            if byte == UInt8(ascii: "\"") {
                flushRun(position)
                position += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            flushRun(position)
            position += 1
            guard let escape = current else { throw error("unterminated string") }
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    // A high surrogate must be followed by an escaped low one.
                    guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate") }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(code) {
                    throw error("unpaired surrogate")
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                scalars.append(scalar)
            default:
                throw error("invalid escape")
            }
            runStart = position
        }
    }

    private mutating func hex4() throws(SyntaxError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("invalid \\u escape") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw error("invalid \\u escape")
            }
            code = code << 4 | UInt32(digit)
            position += 1
        }
        return code
    }
}
