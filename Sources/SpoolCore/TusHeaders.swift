/// The headers of a tus 1.0 answer an upload steers by, as the server sent them (untrusted:
/// `TusUpload` parses and checks each value where it is used).
///
/// Kept by `AnswerHead` from every answer that has one (any other answer has none, and its
/// `HTTPAnswer.tus` stays nil).
public struct TusHeaders: Equatable, Sendable {
    /// The headers kept, by their lower-cased names.
    public enum Field: String, Sendable, CaseIterable {
        case resumable = "tus-resumable"
        case version = "tus-version"
        case extensions = "tus-extension"
        case checksumAlgorithms = "tus-checksum-algorithm"
        case maximumSize = "tus-max-size"
        case uploadOffset = "upload-offset"
        case uploadLength = "upload-length"
    }

    public var values: [Field: String] = [:]

    public init(_ values: [Field: String] = [:]) { self.values = values }

    public subscript(field: Field) -> String? {
        get { values[field] }
        set { values[field] = newValue }
    }

    public var isEmpty: Bool { values.isEmpty }

    /// A header's value as a byte count: decimal digits only (no sign, no spaces), at most 18 of
    /// them; nil for anything else (`Upload-Offset: -1`, `12 ` , `1e6`).
    public func bytes(_ field: Field) -> Int64? {
        guard let text = values[field], !text.isEmpty, text.utf8.count <= 18,
              text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int64(text)
    }

    /// A comma-separated list (`Tus-Extension`, `Tus-Version`), each entry trimmed and
    /// lower-cased, empty entries dropped.
    public func list(_ field: Field) -> [String] {
        guard let text = values[field] else { return [] }
        return text.split(separator: ",").map { $0.trimmingASCIISpaces().lowercased() }.filter { !$0.isEmpty }
    }
}

extension Substring {
    /// Without spaces and tabs at either end.
    func trimmingASCIISpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}
