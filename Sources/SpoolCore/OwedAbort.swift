/// An AbortMultipartUpload spoold still owes the store: the upload was given up (its item failed
/// or was purged, or a new upload replaced it) but the store has not confirmed the abort yet.
/// Recorded in the spool before the part log that named the upload goes (`SPOOL/parts/aborts.log`).
public struct OwedAbort: Equatable, Hashable, Sendable {
    public var id: ItemID
    public var region: String
    public var uploadID: String
    /// The object's URL the upload was created for.
    public var url: String
    /// When it became owed.
    public var since: Timestamp

    public init(id: ItemID, region: String, uploadID: String, url: String, since: Timestamp) {
        (self.id, self.region, self.uploadID, self.url, self.since) = (id, region, uploadID, url, since)
    }
}
