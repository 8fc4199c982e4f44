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

/// Where a tus upload keeps what must outlive its attempt: its upload URL, made durable before
/// the first byte is sent to it. The spool implements it (`PartLog`, the item's part log); the
/// transport only calls it.
public protocol TusJournal: Sendable {
    /// The item whose upload this is.
    var id: ItemID { get }
    /// The recorded upload and the last offset the server acknowledged (0 when none was
    /// recorded; only said in the log, never trusted: a HEAD asks the server), or nil.
    func loadTus() -> (record: TusUploadRecord, offset: Int64)?
    /// Starts the log afresh with `record`; durable when it returns (unless its writes wait for a
    /// direct upload's blob). Throws `PartJournalRefusal` for a URL too long to record, anything
    /// else when the spool failed.
    func begin(_ record: TusUploadRecord) throws
    /// Notes that the server acknowledged `offset` bytes; not synced (it only informs `ls` and
    /// the log line of a start-over). Failures are ignored.
    func recordOffset(_ offset: Int64)
    /// The recorded upload is given up while the item goes on (a new upload replaces it): its
    /// termination is recorded as owed (`SPOOL/parts/aborts.log`), durable when it returns.
    func oweTermination(_ record: TusUploadRecord, since: Timestamp) throws -> OwedAbort
    /// Removes the log; a missing log is fine.
    func discard()
    /// The upload reached `step`: where the spool's crash points for tests are (nothing else).
    func reached(_ step: TusStep)
}

/// The steps of a tus upload that have a crash point, for tests (`SPOOLD_CRASH_AT`).
public enum TusStep: Sendable {
    /// The creation (POST) answered with the upload URL; it is not recorded yet.
    case created
    /// The upload URL is recorded; nothing was sent to it yet.
    case recorded
    /// A PATCH was answered and its offset noted (once per PATCH).
    case patched
}
