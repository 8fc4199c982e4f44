import SpoolCore

/// Everything the transport needs to send one attempt of one item.
public struct UploadRequest: Sendable {
    public var id: ItemID
    public var attempt: Int
    public var url: String
    /// `PUT` or `POST`.
    public var method: String
    /// The blob, opened and checked by the spool; the transport reads it and closes it when the
    /// attempt ends. Its `size` is the item's.
    public var body: BlobBody
    public var contentType: String
    /// Extra headers (item and command line); `Idempotency-Key` is added by the transport.
    public var headers: [String: String]
    /// With `--form`: send `multipart/form-data` with the blob as a file part.
    public var form: MultipartForm?
    /// With `--content-digest`: send an RFC 9530 `Content-Digest` over the exact body (the
    /// multipart body when there is one), computed before the request.
    public var contentDigest: ContentDigest?
    /// Where an S3 multipart upload records its progress (the item's part log); nil for items
    /// too small for one, and for HTTP targets.
    public var partJournal: (any PartJournal)?

    public var size: Int64 { body.size }

    public init(
        id: ItemID, attempt: Int, url: String, method: String, body: BlobBody, contentType: String,
        headers: [String: String], form: MultipartForm? = nil
    ) {
        (self.id, self.attempt, self.url, self.method) = (id, attempt, url, method)
        (self.body, self.contentType, self.headers, self.form) = (body, contentType, headers, form)
    }
}
