/// Where an S3 multipart upload keeps what must outlive its attempt, made durable before it counts: the
/// upload id and the parts the store accepted. The spool implements it (`PartLog`); the
/// transport only calls it. Every write is durable when it returns, and a part counts only then.
public protocol PartJournal: Sendable {
    /// The item whose progress this is (its requests' `Idempotency-Key`).
    var id: ItemID { get }
    /// The recorded upload with its parts, or nil (none yet, or a log that does not parse).
    func load() -> PartLogCodec.State?
    /// Starts the log afresh with a new upload (no parts); durable when it returns. Throws
    /// `PartJournalRefusal` for a record it cannot hold, anything else when the spool failed.
    func begin(_ state: PartLogCodec.State) throws
    /// Appends one completed part; durable when it returns. Throws as `begin`.
    func record(part number: Int, etag: String) throws
    /// The recorded upload `state` is given up while the item goes on (a new upload replaces it):
    /// its AbortMultipartUpload is recorded as owed (`SPOOL/parts/aborts.log`), durable when it
    /// returns, so it is sent even if spoold stops first. Throws as `begin`.
    func oweAbort(_ state: PartLogCodec.State, since: Timestamp) throws -> OwedAbort
    /// Removes the log (the upload is gone or finished); a missing log is fine.
    func discard()
    /// The upload reached `step`: where the spool's crash points for tests are (nothing else).
    func reached(_ step: MultipartStep)
}

/// A record the journal will not write (an upload id, URL or ETag too long for the log's format):
/// nothing was written, and the spool is fine. The store's answer is at fault, not the disk; every
/// other error a journal throws is the spool failing, which stops the daemon.
public struct PartJournalRefusal: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The steps of a multipart upload that have a crash point, for tests (`SPOOLD_CRASH_AT`).
public enum MultipartStep: Sendable {
    /// CreateMultipartUpload answered; the upload id is not recorded yet.
    case created
    /// Every part is recorded; CompleteMultipartUpload is about to be sent.
    case completing
    /// CompleteMultipartUpload answered with success; the item's success is not recorded yet.
    case completed
}
