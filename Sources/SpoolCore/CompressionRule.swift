/// The content codings spoold can send a body in (`--compress`, RFC 9110 section 8.4.1).
public enum ContentCoding: String, Sendable, CaseIterable {
    /// RFC 1952, zlib's deflate: every HTTP server and S3 reader knows it.
    case gzip
}

/// Which items `--compress` sends compressed, and which go as they are: items whose format is
/// compressed already (they would not shrink, and cost CPU on both ends for nothing), known by
/// the extension of their name or by their content type; items that say their own
/// `Content-Encoding` (a producer that compressed them itself: compressing again would make a
/// body whose header names one coding of two); and items under `minimumSize`, which gzip's frame
/// (18 bytes) and deflate's block headers make barely smaller, or larger.
public enum CompressionRule {
    /// Items smaller than this go as they are.
    public static let minimumSize: Int64 = 1024

    /// Extensions of compressed formats (lowercased): images, audio and video, archives and
    /// compressors, and formats that are zip files inside (office documents, jars, apks).
    public static let compressedExtensions: Set<String> = [
        "jpg", "jpeg", "png", "gif", "webp", "avif", "heic", "heif", "jxl",
        "mp4", "m4v", "mov", "mkv", "webm", "avi", "mp3", "m4a", "aac", "ogg", "oga", "opus", "flac",
        "zip", "gz", "tgz", "bz2", "tbz2", "xz", "txz", "zst", "tzst", "lz4", "lzma", "lz", "br", "7z", "rar", "cab",
        "jar", "apk", "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub",
    ]

    /// Content types of compressed formats (the type alone, lowercased, without parameters):
    /// exact types, and prefixes ending in `/` for whole top-level types.
    public static let compressedTypes: Set<String> = [
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/avif", "image/heic", "image/heif", "image/jxl",
        "video/", "audio/mpeg", "audio/mp4", "audio/aac", "audio/ogg", "audio/opus", "audio/flac", "audio/webm",
        "application/zip", "application/gzip", "application/x-gzip", "application/x-bzip2", "application/x-xz",
        "application/zstd", "application/x-7z-compressed", "application/vnd.rar", "application/x-rar-compressed",
        "application/x-lz4", "application/x-lzma", "application/java-archive", "application/epub+zip",
    ]

    /// Why an item goes as it is under `--compress`, or nil: it is sent compressed.
    /// - Parameters:
    ///   - name: its original name (its path below `incoming/`); the last segment's extension counts.
    ///   - headers: its own and the operator's headers, as they will be sent.
    public static func skipReason(name: String, contentType: String, size: Int64, headers: [String: String]) -> String? {
        if size < minimumSize { return "smaller than \(minimumSize) B" }
        if headers.keys.contains(where: { $0.lowercased() == "content-encoding" }) { return "it has its own Content-Encoding" }
        let segment = name.split(separator: "/").last.map(String.init) ?? name
        if let dot = segment.lastIndex(of: "."), dot != segment.startIndex {
            let ext = segment[segment.index(after: dot)...].lowercased()
            if compressedExtensions.contains(ext) { return "a compressed format (.\(ext))" }
        }
        let type = contentType.split(separator: ";").first.map { $0.trimmingSpaces.lowercased() } ?? ""
        let topLevel = type.split(separator: "/").first.map { $0 + "/" } ?? ""
        if compressedTypes.contains(type) || compressedTypes.contains(topLevel) { return "a compressed format (\(type))" }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
