import SpoolCore

/// Sends uploads and reports their outcomes; the engine never sees URLSession.
///
/// `completion` is called exactly once per request, on any thread.
public protocol UploadTransport: Sendable {
    func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void)
    /// Cancels every upload in progress; each still gets its completion, `UploadOutcome.cancelled`
    /// unless another outcome came first.
    func cancelAll()
    /// Sends one AbortMultipartUpload for an upload spoold gave up, and gives `completion` the
    /// store's answer as it came (on any thread). No retry here: the daemon's `AbortSchedule`
    /// decides whether and when to send it again.
    func abortUpload(_ abort: OwedAbort, completion: @escaping @Sendable (UploadOutcome) -> Void)
    /// Ends the transport's own threads and closes its connections, before the process exits or
    /// re-executes; in-flight uploads complete as cancelled. Nothing may be started after it.
    func shutdown()
}

extension UploadTransport {
    /// HTTP targets keep no uploads to abort.
    public func abortUpload(_ abort: OwedAbort, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        completion(.refusal(.unsupported, "spoold is not uploading to an S3 store: it cannot abort multipart upload \(abort.uploadID)"))
    }

    /// Nothing of its own to end (URLSession's threads belong to Foundation).
    public func shutdown() {}
}
