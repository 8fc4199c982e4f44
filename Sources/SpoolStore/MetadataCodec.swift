import Foundation
import SpoolCore

/// Reads and writes an item's `.json` (the `ItemMetadata` of the core) as Foundation's JSON coder
/// does: the common case through `ItemMetadataJSON` (the same bytes, at a fraction of the CPU),
/// the rest through `JSONEncoder` and `JSONDecoder` themselves.
///
/// Output is pretty-printed with sorted keys so that `cat` and `diff` on a spool are pleasant.
public enum MetadataCodec {
    public static func encode(_ metadata: ItemMetadata) -> [UInt8] {
        if var bytes = ItemMetadataJSON.encode(metadata) {
            bytes.append(0x0a)
            return bytes
        }
        return foundationEncode(metadata)
    }

    /// `JSONEncoder`'s bytes, whatever the metadata holds (tests compare the fast path with it).
    public static func foundationEncode(_ metadata: ItemMetadata) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding a value made of strings, numbers and arrays cannot fail.
        guard let data = try? encoder.encode(metadata) else { preconditionFailure("ItemMetadata encoding failed") }
        return Array(data) + [0x0a]
    }

    /// Decodes a json file's bytes; the error text says what is wrong, for `failed/` reasons.
    public static func decode(_ bytes: [UInt8]) throws -> ItemMetadata {
        guard bytes.count <= ItemMetadata.maximumEncodedSize else {
            throw MetadataError("metadata is larger than \(ItemMetadata.maximumEncodedSize) bytes")
        }
        if let metadata = ItemMetadataJSON.decode(bytes) { return metadata }
        return try foundationDecode(bytes)
    }

    /// `JSONDecoder`'s reading (tests compare the fast path with it).
    public static func foundationDecode(_ bytes: [UInt8]) throws -> ItemMetadata {
        do {
            return try JSONDecoder().decode(ItemMetadata.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw MetadataError("metadata lacks the field '\(key.stringValue)'")
        } catch let DecodingError.typeMismatch(_, context) {
            throw MetadataError("metadata field '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type")
        } catch {
            throw MetadataError("metadata is not valid JSON")
        }
    }
}

/// Why an item's metadata (or a sidecar) could not be used.
public struct MetadataError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
