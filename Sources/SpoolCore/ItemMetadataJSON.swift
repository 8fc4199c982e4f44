/// The common case of an item's `.json`, written and read without Foundation's JSON coder.
///
/// Every item's json is written once when it is taken in and read once per claim; Foundation's
/// `JSONEncoder`/`JSONDecoder` made those ~8 % of spoold's CPU per small item. Both sides here
/// handle a subset and answer nil outside it, and the caller (`MetadataCodec`) then uses
/// Foundation, so the bytes on disk and the meaning of any file stay exactly Foundation's:
/// - `encode` writes what `JSONEncoder` with `[.prettyPrinted, .sortedKeys,
///   .withoutEscapingSlashes]` writes, for metadata whose strings are printable ASCII and whose
///   `headers` and `fields` hold at most one entry each (the order of several keys is the
///   encoder's to choose).
/// - `decode` reads strict JSON holding only ItemMetadata's own fields, each once, with integer
///   numbers, strings of valid UTF-8 using no escapes other than `\"`, `\\` and `\/`, and
///   `null` only for optional fields; anything else (an unknown key, a duplicate, a float, a
///   `\u` escape, an error of any kind) is left to `JSONDecoder`, which also words the errors.
public enum ItemMetadataJSON {
    // MARK: Writing

    /// The json's bytes (without the final newline), or nil when `metadata` is outside the subset.
    public static func encode(_ metadata: ItemMetadata) -> [UInt8]? {
        guard metadata.headers.count <= 1, metadata.fields.count <= 1 else { return nil }
        var writer = Writer()
        writer.bytes.reserveCapacity(320 + 256 * metadata.attempts.count)
        writer.open("{")
        writer.key("attempts", first: true)
        writer.open("[")
        for (i, attempt) in metadata.attempts.enumerated() {
            writer.element(first: i == 0)
            writer.open("{")
            var first = true
            writer.optional("code", attempt.code, first: &first)
            writer.optional("error", attempt.error, first: &first)
            writer.optional("finishedAt", attempt.finishedAt, first: &first)
            writer.optional("httpStatus", attempt.httpStatus, first: &first)
            writer.key("number", first: first)
            writer.integer(Int64(attempt.number))
            first = false
            writer.key("outcome", first: false)
            writer.string(attempt.outcome)
            writer.optional("responseExcerpt", attempt.responseExcerpt, first: &first)
            writer.key("startedAt", first: false)
            writer.string(attempt.startedAt)
            writer.close("}", empty: false)
        }
        writer.close("]", empty: metadata.attempts.isEmpty)
        writer.key("contentType", first: false)
        writer.string(metadata.contentType)
        writer.key("createdAt", first: false)
        writer.string(metadata.createdAt)
        var first = false
        writer.optional("failureCode", metadata.failureCode, first: &first)
        writer.optional("failureReason", metadata.failureReason, first: &first)
        writer.key("fields", first: false)
        writer.dictionary(metadata.fields)
        writer.key("headers", first: false)
        writer.dictionary(metadata.headers)
        writer.key("id", first: false)
        writer.string(metadata.id)
        writer.key("originalName", first: false)
        writer.string(metadata.originalName)
        writer.optional("originalNameBytes", metadata.originalNameBytes, first: &first)
        if let retriedAt = metadata.retriedAt {
            writer.key("retriedAt", first: false)
            writer.open("[")
            for (i, time) in retriedAt.enumerated() {
                writer.element(first: i == 0)
                writer.string(time)
            }
            writer.close("]", empty: retriedAt.isEmpty)
        }
        writer.key("size", first: false)
        writer.integer(metadata.size)
        writer.optional("url", metadata.url, first: &first)
        writer.key("version", first: false)
        writer.integer(Int64(metadata.version))
        writer.close("}", empty: false)
        return writer.outsideSubset ? nil : writer.bytes
    }

    /// Foundation's pretty printer: two spaces per level, `"key" : value`, and an empty container
    /// as its brackets around an empty line.
    private struct Writer {
        var bytes: [UInt8] = []
        var depth = 0
        /// Set when a string needs more than `\"` and `\\` (a control character, non-ASCII).
        var outsideSubset = false

        mutating func newline() {
            bytes.append(0x0A)
            for _ in 0..<depth { bytes.append(0x20); bytes.append(0x20) }
        }

        mutating func open(_ bracket: Unicode.Scalar) {
            bytes.append(UInt8(ascii: bracket))
            depth += 1
        }

        mutating func close(_ bracket: Unicode.Scalar, empty: Bool) {
            depth -= 1
            if empty { bytes.append(0x0A) }
            newline()
            bytes.append(UInt8(ascii: bracket))
        }

        mutating func element(first: Bool) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            newline()
        }

        mutating func key(_ name: StaticString, first: Bool) {
            element(first: first)
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            bytes.append(contentsOf: [UInt8(ascii: "\""), 0x20, UInt8(ascii: ":"), 0x20])
        }

        mutating func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                case 0x20...0x7E:
                    bytes.append(byte)
                default:
                    outsideSubset = true
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }

        mutating func integer(_ value: Int64) {
            bytes.append(contentsOf: String(value).utf8)
        }

        mutating func optional(_ name: StaticString, _ value: String?, first: inout Bool) {
            guard let value else { return }
            key(name, first: first)
            string(value)
            first = false
        }

        mutating func optional(_ name: StaticString, _ value: Int?, first: inout Bool) {
            guard let value else { return }
            key(name, first: first)
            integer(Int64(value))
            first = false
        }

        /// At most one entry (checked by `encode`).
        mutating func dictionary(_ entries: [String: String]) {
            open("{")
            for (name, value) in entries {
                element(first: true)
                string(name)
                bytes.append(contentsOf: [0x20, UInt8(ascii: ":"), 0x20])
                string(value)
            }
            close("}", empty: entries.isEmpty)
        }
    }

    // MARK: Reading

    /// The metadata in `bytes`, or nil when they are outside the subset (not necessarily wrong:
    /// the caller asks `JSONDecoder`).
    public static func decode(_ bytes: [UInt8]) -> ItemMetadata? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer)
            guard let metadata = reader.metadata() else { return nil }
            reader.skipSpace()
            return reader.position == buffer.count ? metadata : nil
        }
    }

    /// Reads one document; every method answers nil (or false) when the input leaves the subset.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipSpace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        /// Skips space, then takes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard current == byte else { return false }
            position += 1
            return true
        }

        mutating func takeNull() -> Bool {
            skipSpace()
            guard bytes.count - position >= 4, bytes[position] == UInt8(ascii: "n"), bytes[position + 1] == UInt8(ascii: "u"),
                  bytes[position + 2] == UInt8(ascii: "l"), bytes[position + 3] == UInt8(ascii: "l")
            else { return false }
            position += 4
            return true
        }

        /// A string with no escapes but `\"`, `\\` and `\/`, of valid UTF-8 and no control characters.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            var escaped = false
            while let byte = current {
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { return nil }
                if byte == UInt8(ascii: "\\") {
                    guard position + 1 < bytes.count else { return nil }
                    switch bytes[position + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escaped = true
                    default: return nil
                    }
                    position += 2
                } else {
                    position += 1
                }
            }
            guard current == UInt8(ascii: "\"") else { return nil }
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<position])
            position += 1
            guard escaped else { return String(validating: raw, as: UTF8.self) }
            var plain: [UInt8] = []
            plain.reserveCapacity(raw.count)
            var i = 0
            while i < raw.count {
                if raw[i] == UInt8(ascii: "\\") { i += 1 }
                plain.append(raw[i])
                i += 1
            }
            return String(validating: plain, as: UTF8.self)
        }

        /// An integer without sign tricks: `-`? then `0` or digits not starting with `0`, in range.
        mutating func integer() -> Int64? {
            skipSpace()
            let negative = current == UInt8(ascii: "-")
            if negative { position += 1 }
            let start = position
            var value: Int64 = 0
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                value = sum
                position += 1
            }
            let digits = position - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), !(negative && value == 0) else { return nil }
            // A fraction or an exponent is Foundation's to judge.
            if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return nil }
            return negative ? -value : value
        }

        mutating func int() -> Int? { integer().flatMap { Int(exactly: $0) } }

        mutating func optionalString() -> String?? {
            if takeNull() { return .some(nil) }
            return string().map { .some($0) }
        }

        mutating func optionalInt() -> Int?? {
            if takeNull() { return .some(nil) }
            return int().map { .some($0) }
        }

        /// The members of an object: `member` is called with each key and reads its value.
        mutating func object(_ member: (inout Reader, String) -> Bool) -> Bool {
            guard take(UInt8(ascii: "{")) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            repeat {
                guard let key = string(), take(UInt8(ascii: ":")), member(&self, key) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}"))
        }

        mutating func array(_ element: (inout Reader) -> Bool) -> Bool {
            guard take(UInt8(ascii: "[")) else { return false }
            if take(UInt8(ascii: "]")) { return true }
            repeat {
                guard element(&self) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]"))
        }

        /// A string-to-string object without duplicate keys.
        mutating func dictionary() -> [String: String]? {
            var entries: [String: String] = [:]
            let ok = object { reader, key in
                guard let value = reader.string(), entries.updateValue(value, forKey: key) == nil else { return false }
                return true
            }
            return ok ? entries : nil
        }

        mutating func attempt() -> AttemptRecord? {
            var number: Int?, startedAt: String?, outcome: String?
            var finishedAt: String??, httpStatus: Int??, error: String??, excerpt: String??, code: String??
            let ok = object { reader, key in
                switch key {
                case "number": return once(&number, reader.int())
                case "startedAt": return once(&startedAt, reader.string())
                case "finishedAt": return once(&finishedAt, reader.optionalString())
                case "outcome": return once(&outcome, reader.string())
                case "httpStatus": return once(&httpStatus, reader.optionalInt())
                case "error": return once(&error, reader.optionalString())
                case "responseExcerpt": return once(&excerpt, reader.optionalString())
                case "code": return once(&code, reader.optionalString())
                default: return false
                }
            }
            guard ok, let number, let startedAt, let outcome else { return nil }
            return AttemptRecord(
                number: number, startedAt: startedAt, finishedAt: finishedAt ?? nil, outcome: outcome,
                httpStatus: httpStatus ?? nil, error: error ?? nil, responseExcerpt: excerpt ?? nil, code: code ?? nil)
        }

        mutating func metadata() -> ItemMetadata? {
            var version: Int?, id: String?, originalName: String?, size: Int64?, contentType: String?, createdAt: String?
            var headers: [String: String]?, fields: [String: String]?, attempts: [AttemptRecord]?
            var originalNameBytes: String??, failureReason: String??, failureCode: String??, retriedAt: [String]??, url: String??
            let ok = object { reader, key in
                switch key {
                case "version": return once(&version, reader.int())
                case "id": return once(&id, reader.string())
                case "originalName": return once(&originalName, reader.string())
                case "originalNameBytes": return once(&originalNameBytes, reader.optionalString())
                case "size": return once(&size, reader.integer())
                case "contentType": return once(&contentType, reader.string())
                case "createdAt": return once(&createdAt, reader.string())
                case "headers": return once(&headers, reader.dictionary())
                case "fields": return once(&fields, reader.dictionary())
                case "failureReason": return once(&failureReason, reader.optionalString())
                case "failureCode": return once(&failureCode, reader.optionalString())
                case "url": return once(&url, reader.optionalString())
                case "attempts":
                    var list: [AttemptRecord] = []
                    let read = reader.array { reader in
                        guard let attempt = reader.attempt() else { return false }
                        list.append(attempt)
                        return true
                    }
                    return once(&attempts, read ? list : nil)
                case "retriedAt":
                    if reader.takeNull() { return once(&retriedAt, .some(nil)) }
                    var list: [String] = []
                    let read = reader.array { reader in
                        guard let time = reader.string() else { return false }
                        list.append(time)
                        return true
                    }
                    return once(&retriedAt, read ? .some(list) : nil)
                default:
                    return false
                }
            }
            guard ok, let version, let id, let originalName, let size, let contentType, let createdAt,
                  let headers, let fields, let attempts
            else { return nil }
            return ItemMetadata(
                version: version, id: id, originalName: originalName, originalNameBytes: originalNameBytes ?? nil,
                size: size, contentType: contentType, createdAt: createdAt, headers: headers, fields: fields,
                attempts: attempts, failureReason: failureReason ?? nil, failureCode: failureCode ?? nil, retriedAt: retriedAt ?? nil,
                url: url ?? nil)
        }
    }
}

/// Stores `value` in `slot` if it was read (non-nil) and the slot is still empty: a key seen
/// twice leaves the subset.
private func once<T>(_ slot: inout T?, _ value: T?) -> Bool {
    guard slot == nil, let value else { return false }
    slot = value
    return true
}

extension ItemMetadata {
    /// Every field as read from a json, unchecked (as `JSONDecoder` fills them).
    init(
        version: Int, id: String, originalName: String, originalNameBytes: String?, size: Int64, contentType: String,
        createdAt: String, headers: [String: String], fields: [String: String], attempts: [AttemptRecord],
        failureReason: String?, failureCode: String?, retriedAt: [String]?, url: String?
    ) {
        self.version = version
        self.id = id
        self.originalName = originalName
        self.originalNameBytes = originalNameBytes
        self.size = size
        self.contentType = contentType
        self.createdAt = createdAt
        self.headers = headers
        self.fields = fields
        self.attempts = attempts
        self.failureReason = failureReason
        self.failureCode = failureCode
        self.retriedAt = retriedAt
        self.url = url
    }
}

extension AttemptRecord {
    /// Every field as read from a json, unchecked (as `JSONDecoder` fills them).
    init(
        number: Int, startedAt: String, finishedAt: String?, outcome: String, httpStatus: Int?, error: String?,
        responseExcerpt: String?, code: String?
    ) {
        self.number = number
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.outcome = outcome
        self.httpStatus = httpStatus
        self.error = error
        self.responseExcerpt = responseExcerpt
        self.code = code
    }
}
