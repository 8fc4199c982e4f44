import SpoolCore

/// Everything the transport needs to send one attempt of one item.
public struct UploadRequest: Sendable {
    public var id: ItemID
    public var attempt: Int
    public var url: String
    /// `PUT` or `POST`.
    public var method: String
    /// Absolute path of the blob in `inflight/`, streamed from disk.
    public var blobPath: String
    public var size: Int64
    public var contentType: String
    /// Extra headers (item and command line); `Idempotency-Key` is added by the transport.
    public var headers: [String: String]

    public init(
        id: ItemID, attempt: Int, url: String, method: String, blobPath: String, size: Int64, contentType: String,
        headers: [String: String]
    ) {
        (self.id, self.attempt, self.url, self.method) = (id, attempt, url, method)
        (self.blobPath, self.size, self.contentType, self.headers) = (blobPath, size, contentType, headers)
    }
}
