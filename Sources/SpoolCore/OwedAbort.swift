/// An upload spoold gave up and still has to end on the server: an S3 multipart upload's
/// AbortMultipartUpload, or a tus upload's termination (DELETE of its upload URL). The upload was
/// given up (its item failed or was purged, or a new upload replaced it) but the server has not
/// confirmed its end yet. Recorded in the spool before the part log that named the upload goes
/// (`SPOOL/parts/aborts.log`).
public struct OwedAbort: Equatable, Hashable, Sendable {
    /// Which request ends the upload.
    public enum Kind: String, Equatable, Hashable, Sendable {
        /// AbortMultipartUpload: `uploadID` is the S3 upload id, `url` the object's URL.
        case s3Multipart
        /// A tus termination: `uploadID` is the upload URL, `url` the endpoint it was created at
        /// (asked whether it offers `termination`); `region` is empty.
        case tusTermination
    }

    public var kind: Kind
    public var id: ItemID
    public var region: String
    /// The S3 upload id, or the tus upload URL: what `aborted` records name.
    public var uploadID: String
    /// The object's URL (S3), or the tus endpoint.
    public var url: String
    /// When it became owed.
    public var since: Timestamp

    public init(id: ItemID, region: String, uploadID: String, url: String, since: Timestamp) {
        (self.kind, self.id, self.region, self.uploadID, self.url, self.since) = (.s3Multipart, id, region, uploadID, url, since)
    }

    /// The termination of the tus upload at `uploadURL`, created at `endpoint`.
    public init(tusTerminationOf id: ItemID, uploadURL: String, endpoint: String, since: Timestamp) {
        (self.kind, self.id, self.region, self.uploadID, self.url, self.since) = (.tusTermination, id, "", uploadURL, endpoint, since)
    }

    /// The request's name, for the log.
    public var requestName: String {
        switch kind {
        case .s3Multipart: "AbortMultipartUpload of upload \(uploadID)"
        case .tusTermination: "the tus termination (DELETE) of \(uploadID)"
        }
    }
}
