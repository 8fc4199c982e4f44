/// Guesses a content type from a file name's extension; the fallback is application/octet-stream.
public enum ContentType {
    public static let fallback = "application/octet-stream"

    private static let byExtension: [String: String] = [
        "json": "application/json", "txt": "text/plain; charset=utf-8", "log": "text/plain; charset=utf-8",
        "csv": "text/csv", "xml": "application/xml", "html": "text/html", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "png": "image/png", "gif": "image/gif", "webp": "image/webp", "heic": "image/heic", "tif": "image/tiff",
        "tiff": "image/tiff", "mp4": "video/mp4", "mov": "video/quicktime", "mkv": "video/x-matroska",
        "wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac", "pdf": "application/pdf",
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip", "tar": "application/x-tar",
        "zst": "application/zstd", "ndjson": "application/x-ndjson", "jsonl": "application/x-ndjson",
    ]

    public static func guess(forFileName name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return fallback }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? fallback
    }
}
