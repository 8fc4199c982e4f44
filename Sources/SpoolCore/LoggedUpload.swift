/// The upload an item's part log records, as an attempt reads it when it begins
/// (`PartRecorder.load`): an S3 multipart upload or a tus upload, whichever the log holds. An
/// attempt of the other protocol (the operator switched `--url` between s3:// and tus+ while the
/// item had a log) gives it up (`StartOverRecord(otherKind:)`) before it begins anew.
public enum LoggedUpload: Equatable, Sendable {
    /// An S3 multipart upload, with the parts recorded.
    case s3(PartLogCodec.State)
    /// A tus upload, with the last offset noted (a hint for the log: a HEAD asks the server).
    case tus(TusUploadRecord, offset: Int64)

    /// The S3 upload, if that is what the log records.
    public var s3: PartLogCodec.State? { if case .s3(let state) = self { state } else { nil } }

    /// The tus upload and its last offset noted, if that is what the log records.
    public var tus: (record: TusUploadRecord, offset: Int64)? { if case .tus(let record, let offset) = self { (record, offset) } else { nil } }
}
