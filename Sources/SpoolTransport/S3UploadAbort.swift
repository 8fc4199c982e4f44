import Dispatch
import SpoolCore
import Synchronization

/// AbortMultipartUpload from outside the daemon (`spoold purge`): one signed request over a
/// URLSession transport of its own, waited for, never longer than its deadline, so a store that
/// is down cannot hold up a purge.
public enum S3UploadAbort {
    /// Whether the store confirmed (2xx, or 404: the upload is gone anyway).
    public static func abort(
        uploadID: String, url: String, id: ItemID, signer: SigV4Signer, clock: any Clock, timeoutSeconds: Double
    ) -> Bool {
        let transport = URLSessionTransport(concurrency: 1, deadlineSeconds: timeoutSeconds, idleSeconds: timeoutSeconds)
        let done = DispatchSemaphore(value: 0)
        let confirmed = Mutex(false)
        S3MultipartUpload.abort(
            uploadID: uploadID, url: url, id: id, transport: transport, signer: signer, clock: clock, deadlineSeconds: timeoutSeconds
        ) { ok in
            confirmed.withLock { $0 = ok }
            done.signal()
        }
        _ = done.wait(timeout: .now() + timeoutSeconds + 1)
        return withExtendedLifetime(transport) { confirmed.withLock { $0 } }
    }
}
