/// The framing of a `multipart/form-data` upload (RFC 7578): the bytes before and after the
/// blob, so the body can be streamed from disk with its exact length known in advance.
///
/// Text fields come first, in name order, then the file part. Names and the filename are quoted
/// strings in which `"`, CR and LF are percent-encoded (RFC 7578 §4.2, as browsers do).
public struct MultipartForm: Equatable, Sendable {
    public var boundary: String
    public var fileField: String
    public var fileName: String
    public var contentType: String
    public var fields: [String: String]

    /// - Parameter randomBits: 128 random bits for the boundary (injected so tests are deterministic).
    public init(
        fileField: String, fileName: String, contentType: String, fields: [String: String],
        randomBits: (UInt64, UInt64)
    ) {
        self.boundary = "spoold-" + MultipartForm.hex(randomBits.0) + MultipartForm.hex(randomBits.1)
        self.fileField = fileField
        self.fileName = fileName
        self.contentType = contentType
        self.fields = fields
    }

    /// The request's `Content-Type`.
    public var headerValue: String { "multipart/form-data; boundary=\(boundary)" }

    /// Everything before the blob's bytes: the text fields and the file part's head.
    public var preamble: [UInt8] {
        var text = ""
        for name in fields.keys.sorted() {
            text += "--\(boundary)\r\n"
            text += "Content-Disposition: form-data; name=\"\(MultipartForm.quoted(name))\"\r\n\r\n"
            text += fields[name]! + "\r\n"
        }
        text += "--\(boundary)\r\n"
        text += "Content-Disposition: form-data; name=\"\(MultipartForm.quoted(fileField))\"; filename=\"\(MultipartForm.quoted(fileName))\"\r\n"
        text += "Content-Type: \(MultipartForm.singleLine(contentType))\r\n\r\n"
        return Array(text.utf8)
    }

    /// Everything after the blob's bytes.
    public var epilogue: [UInt8] { Array("\r\n--\(boundary)--\r\n".utf8) }

    /// The body's length for a blob of `blobSize` bytes.
    public func bodyLength(blobSize: Int64) -> Int64 {
        Int64(preamble.count) + blobSize + Int64(epilogue.count)
    }

    /// Whether `value` could collide with the boundary (it never should: 128 random bits).
    public func fieldsContainBoundary() -> Bool {
        fields.contains { $0.key.contains(boundary) || $0.value.contains(boundary) }
    }

    static func quoted(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func singleLine(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }.map(Character.init))
    }

    static func hex(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef")
        return String((0..<16).map { digits[Int((value >> UInt64(60 - 4 * $0)) & 15)] })
    }
}
