/// The headers of tus 1.0 requests (the protocol's own), and which of the item's and the
/// operator's headers may go with them.
public enum TusRequestHeaders {
    /// The `Content-Type` of every request that carries upload bytes (PATCH, a creation with upload).
    public static let contentType = "application/offset+octet-stream"

    /// Every request but OPTIONS says which version of the protocol it speaks.
    public static let resumable = ["Tus-Resumable": TusCapabilities.version]

    /// A creation (POST): the upload's length and its metadata.
    public static func create(length: Int64, fileName: [UInt8], fileType: String) -> [String: String] {
        resumable.merging(
            ["Upload-Length": String(length), "Upload-Metadata": metadata(fileName: fileName, fileType: fileType)]) { $1 }
    }

    /// A PATCH from `offset`.
    public static func patch(offset: Int64) -> [String: String] {
        resumable.merging(["Upload-Offset": String(offset)]) { $1 }
    }

    /// `Upload-Checksum: <algorithm> <base64 digest>` of the bytes a request carries.
    public static func checksum(_ algorithm: TusChecksum, digest: [UInt8]) -> [String: String] {
        ["Upload-Checksum": "\(algorithm.rawValue) \(Base64.encode(digest))"]
    }

    /// `Upload-Metadata`: `filename` (the item's path below incoming/, its bytes as they are) and
    /// `filetype` (its content type), each value base64 as the spec says: the keys tus-js-client
    /// and Uppy send, which some servers require. Base64 holds no comma, space or line break, so
    /// no name can break the header.
    public static func metadata(fileName: [UInt8], fileType: String) -> String {
        "filename \(Base64.encode(fileName)),filetype \(Base64.encode(Array(fileType.utf8)))"
    }

    /// Whether `name` belongs to the protocol (`Tus-*`, `Upload-*`), or would change the method a
    /// server acts on (`X-HTTP-Method-Override`, which tus servers honour): an item's or the
    /// operator's header of such a name is never sent with a tus request, so no producer can turn
    /// a PATCH into a DELETE or lie about an offset.
    public static func isReserved(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasPrefix("tus-") || lower.hasPrefix("upload-") || lower == "x-http-method-override"
            || lower == "x-http-method" || lower == "x-method-override"
    }

    /// `own` (the operator's and the item's headers) without the reserved names, with `tus` added.
    public static func merged(own: [String: String], tus: [String: String]) -> [String: String] {
        own.filter { !isReserved($0.key) }.merging(tus) { $1 }
    }
}
