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
    /// With `--form`: send `multipart/form-data` with the blob as a file part.
    public var form: MultipartForm?
    /// Where the multipart body is assembled (in the spool's `tmp/`); removed after the attempt.
    public var formBodyPath: String?
    /// With `--content-digest`: send an RFC 9530 `Content-Digest` over the exact body (the
    /// multipart body when there is one), computed before the request.
    public var contentDigest: ContentDigest?

    public init(
        id: ItemID, attempt: Int, url: String, method: String, blobPath: String, size: Int64, contentType: String,
        headers: [String: String], form: MultipartForm? = nil, formBodyPath: String? = nil
    ) {
        (self.id, self.attempt, self.url, self.method) = (id, attempt, url, method)
        (self.blobPath, self.size, self.contentType, self.headers) = (blobPath, size, contentType, headers)
        (self.form, self.formBodyPath) = (form, formBodyPath)
    }
}
