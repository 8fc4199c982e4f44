import Foundation
import SpoolCore
import Synchronization

/// AbortMultipartUpload from outside the daemon (`spoold purge`): one signed request, waited
/// for, never longer than its deadline, so a store that is down cannot hold up a purge.
public enum S3UploadAbort {
    /// Whether the store confirmed (2xx, or 404: the upload is gone anyway).
    public static func abort(uploadID: String, url: String, signer: SigV4Signer, clock: any Clock, timeoutSeconds: Double) -> Bool {
        let session = S3RequestSession(concurrency: 1, deadlineSeconds: timeoutSeconds, idleSeconds: timeoutSeconds)
        let done = DispatchSemaphore(value: 0)
        let confirmed = Mutex(false)
        S3MultipartUpload.abort(
            uploadID: uploadID, url: url, session: session, signer: signer, clock: clock, deadlineSeconds: timeoutSeconds
        ) { ok in
            confirmed.withLock { $0 = ok }
            done.signal()
        }
        _ = done.wait(timeout: .now() + timeoutSeconds + 1)
        return confirmed.withLock { $0 }
    }
}
