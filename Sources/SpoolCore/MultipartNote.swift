/// What an S3 multipart upload (or a tus upload) tells the daemon while its attempt runs, for
/// the log and the metrics: nothing in here steers the item (its attempt's outcome does that).
public enum MultipartNote: Equatable, Sendable {
    /// A recorded upload found open and taken up again.
    case resumed(Resume)
    /// A recorded tus upload found on the server and taken up again.
    case tusResumed(TusResume)
    /// The upload's parts are thrown away and a new upload begins.
    case startedOver(StartOver)
    /// A completion in doubt was checked with the store (`MultipartCompletionCheck`).
    case completionChecked(CompletionCheck)
    /// An upload is given up and its AbortMultipartUpload is now owed (recorded in the spool).
    case abortOwed(OwedAbort)

    public struct Resume: Equatable, Sendable {
        public var uploadID: String
        public var partCount: Int
        /// Parts the store listed (every page of ListParts).
        public var listed: Int
        /// Parts the part log records.
        public var recorded: Int
        /// Parts both record and list with the same ETag: never sent again.
        public var kept: Int
        /// Bytes still to send.
        public var bytesToSend: Int64

        public init(uploadID: String, partCount: Int, listed: Int, recorded: Int, kept: Int, bytesToSend: Int64) {
            (self.uploadID, self.partCount, self.listed, self.recorded, self.kept, self.bytesToSend) =
                (uploadID, partCount, listed, recorded, kept, bytesToSend)
        }
    }

    public struct TusResume: Equatable, Sendable {
        public var uploadURL: String
        public var length: Int64
        /// Bytes the server holds (its `Upload-Offset`): never sent again.
        public var offset: Int64

        public init(uploadURL: String, length: Int64, offset: Int64) {
            (self.uploadURL, self.length, self.offset) = (uploadURL, length, offset)
        }
    }

    public struct StartOver: Equatable, Sendable {
        public enum Reason: String, Sendable, CaseIterable {
            /// The store no longer has the upload (NoSuchUpload: aborted, expired, lost) and did not make the object.
            case uploadGone = "upload_gone"
            /// The store refused to complete the upload (`InvalidPart`) and nothing re-sent can mend it.
            case completionRefused = "completion_refused"
            /// The log was written for another object (its URL, region or size changed).
            case objectChanged = "object_changed"
        }

        public var reason: Reason
        /// What the store answered, in words for the log.
        public var detail: String
        public var oldUploadID: String
        /// Parts of the old upload the store had accepted, and their bytes: sent for nothing.
        public var discardedParts: Int
        public var discardedBytes: Int64
        /// A tus upload starts over (no parts; `oldUploadID` is the old upload's URL, unless it
        /// was an S3 upload given up as a log of the other kind).
        public var isTus = false

        public init(reason: Reason, detail: String, oldUploadID: String, discardedParts: Int, discardedBytes: Int64, isTus: Bool = false) {
            (self.reason, self.detail, self.oldUploadID, self.discardedParts, self.discardedBytes) =
                (reason, detail, oldUploadID, discardedParts, discardedBytes)
            self.isTus = isTus
        }
    }

    public struct CompletionCheck: Equatable, Sendable {
        /// Why it was in doubt (the completion's answer, or "resumed upload gone").
        public var doubt: String
        public var uploadID: String
        public var decision: MultipartCompletionCheck.Decision

        public init(doubt: String, uploadID: String, decision: MultipartCompletionCheck.Decision) {
            (self.doubt, self.uploadID, self.decision) = (doubt, uploadID, decision)
        }

        /// The decision's name in the metrics (`decision` label).
        public var decisionLabel: String {
            switch decision {
            case .headObject: "asked"
            case .completed: "completed"
            case .startOver: "start_over"
            case .retryLater: "unknown"
            }
        }
    }
}
