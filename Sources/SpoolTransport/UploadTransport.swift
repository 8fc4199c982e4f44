import SpoolCore

/// Sends uploads and reports their outcomes; the engine never sees URLSession.
///
/// `completion` is called exactly once per request, on any thread.
public protocol UploadTransport: Sendable {
    func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void)
    /// Cancels every upload in progress; each still gets its completion, `UploadOutcome.cancelled`
    /// unless another outcome came first.
    func cancelAll()
}
