/// What the spool records of a tus upload in progress (`SPOOL/parts/<id>.log`, `PartLogCodec`):
/// enough to take it up again after a crash, and to end it (`termination`) when it is given up.
public struct TusUploadRecord: Equatable, Sendable {
    /// The blob's size: the upload's `Upload-Length`.
    public var size: Int64
    /// The upload URL the server made (`Location` of the creation), absolute.
    public var uploadURL: String
    /// The endpoint it was created at (`--url` without `tus+`): a log of another endpoint is an
    /// upload on another server, never resumed.
    public var endpoint: String

    public init(size: Int64, uploadURL: String, endpoint: String) {
        (self.size, self.uploadURL, self.endpoint) = (size, uploadURL, endpoint)
    }
}

/// The steps of a tus upload that have a crash point, for tests (`SPOOLD_CRASH_AT`).
public enum TusStep: Sendable {
    /// The creation (POST) answered with the upload URL; it is not recorded yet.
    case created
    /// The upload URL is recorded; nothing was sent to it yet.
    case recorded
    /// A PATCH was answered and the daemon wrote its offset to the log (once per PATCH).
    case patched
}
