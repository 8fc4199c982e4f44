import SpoolCore

/// Sends uploads and reports their outcomes; the engine never sees URLSession.
///
/// `completion` is called exactly once per request, on any thread.
public protocol UploadTransport: Sendable {
    func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void)
    /// Cancels every upload in progress; each still gets its completion, `UploadOutcome.cancelled`
    /// unless another outcome came first.
    func cancelAll()
    /// The item will not be uploaded (it went to failed/ or was purged): lets go of what is kept
    /// for it beyond its files (an S3 multipart upload is aborted, best effort and bounded in
    /// time), removes its part log, then calls `done`, on any thread.
    func abandon(_ journal: any PartJournal, done: @escaping @Sendable () -> Void)
    /// Ends the transport's own threads and closes its connections, before the process exits or
    /// re-executes; in-flight uploads complete as cancelled. Nothing may be started after it.
    func shutdown()
}

extension UploadTransport {
    /// HTTP targets keep nothing elsewhere: the log (if any) is removed.
    public func abandon(_ journal: any PartJournal, done: @escaping @Sendable () -> Void) {
        journal.discard()
        done()
    }

    /// Nothing of its own to end (URLSession's threads belong to Foundation).
    public func shutdown() {}
}
