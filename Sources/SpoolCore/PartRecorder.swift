/// Where a resumable upload (an S3 multipart upload, a tus upload) keeps what must outlive its
/// attempt: the upload id or URL and the parts the store accepted, made durable before they
/// count. The driver (in the transport) only asks; the daemon performs each record in its own
/// loop through the spool (the item's part log, `SPOOL/parts/<id>.log`), has it synced where the
/// spool's other syncs are made, and answers once it is durable. A part counts, and the step
/// that relies on it runs, only then.
public protocol PartRecorder: Sendable {
    /// The item whose progress this is (its requests' `Idempotency-Key`).
    var id: ItemID { get }
    /// The recorded upload (an S3 upload with its parts, or a tus upload with the last offset
    /// noted), or nil (none yet, or a log that does not parse). Read once, as the attempt begins,
    /// before it asks for any record. An upload of the other protocol is given up by asking for
    /// `.startOver(StartOverRecord(otherKind:))`, and the attempt begins anew once it is recorded.
    func load() -> LoggedUpload?
    /// Asks for `record`; `then` runs, on any thread, once it counts (`PartRecorded`). A record
    /// the spool could not make durable never gets an answer: that is the daemon failing, which
    /// stops it and cancels the attempt.
    func record(_ record: PartRecord, then: @escaping @Sendable (PartRecorded) -> Void)
    /// Notes that the tus server acknowledged `offset` bytes: a hint for `ls` and the log, never
    /// synced, never waited for; the daemon writes the offsets noted at most once a second (and
    /// before the next record, and when the attempt ends), so a chunk does not wake its loop.
    func noteOffset(_ offset: Int64)
    /// The upload reached `step`: where the spool's crash points for tests are (nothing else).
    func reached(_ step: MultipartStep)
    /// The tus upload reached `step` (crash points, as `reached(_: MultipartStep)`).
    func reached(_ step: TusStep)
}

/// What a resumable upload's driver asks its `PartRecorder` to record.
public enum PartRecord: Equatable, Sendable {
    /// A new S3 multipart upload: the log begins afresh with it (no parts yet).
    case s3Upload(PartLogCodec.State)
    /// An S3 part the store accepted, with its ETag.
    case part(Int, etag: String)
    /// A new tus upload: the log begins afresh with its upload URL.
    case tusUpload(TusUploadRecord)
    /// The recorded upload is thrown away while the item goes on (a new upload replaces it).
    case startOver(StartOverRecord)
}

/// A start-over as it is recorded, the same for both protocols: when the old upload may still
/// exist, its end (an S3 abort, a tus termination) is owed first (`SPOOL/parts/aborts.log`,
/// durable); then the log is discarded, and the daemon says so (`note`, then
/// `MultipartNote.abortOwed`).
public struct StartOverRecord: Equatable, Sendable {
    /// An upload given up.
    public enum Upload: Equatable, Sendable {
        case s3(PartLogCodec.State)
        case tus(TusUploadRecord)
    }

    /// The old upload, when its end is owed (it may still exist and the item has a log).
    public var owing: Upload?
    /// What the daemon says about it (`MultipartNote.startedOver`).
    public var note: MultipartNote

    public init(owing: Upload?, note: MultipartNote) { (self.owing, self.note) = (owing, note) }

    /// A log of the other protocol's upload, found as an attempt begins (the operator switched
    /// `--url` between s3:// and tus+ while the item had one): that upload's end is owed, the log
    /// goes, and the attempt begins anew, said as a start-over of the attempt's own protocol.
    public init(otherKind logged: LoggedUpload) {
        switch logged {
        case .s3(let state):
            let bytes = state.plan.bytes(ofParts: state.parts.keys)
            self.init(owing: .s3(state), note: .startedOver(.init(
                reason: .objectChanged, detail: "its part log names S3 multipart upload \(state.uploadID), and --url is a tus+ URL now",
                oldUploadID: state.uploadID, discardedParts: state.parts.count, discardedBytes: bytes, isTus: true)))
        case .tus(let record, let offset):
            self.init(owing: .tus(record), note: .startedOver(.init(
                reason: .objectChanged, detail: "its part log names tus upload \(record.uploadURL), and --url is not a tus+ URL now",
                oldUploadID: record.uploadURL, discardedParts: 0, discardedBytes: offset)))
        }
    }

    /// The end `id` owes for the old upload, owed from `since`; nil when none is.
    public func owed(by id: ItemID, since: Timestamp) -> OwedAbort? {
        switch owing {
        case .s3(let state): OwedAbort(id: id, region: state.region, uploadID: state.uploadID, url: state.url, since: since)
        case .tus(let record): OwedAbort(tusTerminationOf: id, uploadURL: record.uploadURL, endpoint: record.endpoint, since: since)
        case nil: nil
        }
    }
}

/// How a record ended, as its driver is told.
public enum PartRecorded: Equatable, Sendable {
    /// It counts: durable (or, for a direct upload whose blob is not durable yet, written, to be
    /// synced right after the blob: a record is never durable before the bytes it vouches for).
    case recorded
    /// Not written: the server's answer cannot be recorded (an upload id, URL or ETag too long for
    /// the log's format). The spool is fine; the store's answer is at fault. For a start-over,
    /// the old upload's end could not be recorded as owed: the log is discarded anyway.
    case refused(PartJournalRefusal)
}

/// A record the part log will not write (an upload id, URL or ETag too long for the log's
/// format): nothing was written, and the spool is fine. The store's answer is at fault, not the
/// disk; every other error the spool meets recording is the spool failing, which stops the daemon.
public struct PartJournalRefusal: Error, Equatable, CustomStringConvertible, Sendable {
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
