import SpoolCore
import SpoolSystem

/// What arrived for the engine since its last step: the input of `Engine.step(now:events:)`.
public struct EngineEvents: Sendable {
    /// inotify events on incoming/, its subfolders, pending/ and the spool root, in order.
    public var watcher: [InotifyWatcher.Event]
    /// Uploads that ended, in the order they were posted.
    public var completions: [CompletionInbox.Completion]
    /// Stop requests so far (not since the last step): 1 stops new work, 2 cancels uploads.
    public var stopLevel: Int
    /// What the transport told besides outcomes, in the order it was posted.
    public var reports: [TransportReport]

    public init(
        watcher: [InotifyWatcher.Event] = [], completions: [CompletionInbox.Completion] = [], stopLevel: Int = 0,
        reports: [TransportReport] = []
    ) {
        (self.watcher, self.completions, self.stopLevel, self.reports) = (watcher, completions, stopLevel, reports)
    }
}

/// What the transport tells the engine besides an upload's outcome.
public enum TransportReport: Sendable {
    /// An S3 multipart upload of the item did something worth saying (`MultipartNote`).
    case multipart(ItemID, MultipartNote)
    /// An AbortMultipartUpload the engine sent (`UploadTransport.abortUpload`) ended so.
    case abortEnded(OwedAbort, UploadOutcome)
    /// An upload asks for a record of its progress (`Engine+Records`).
    case record(PartRecordRequest)
}
