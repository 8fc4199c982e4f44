import Dispatch
import SpoolCore
import Synchronization

/// AbortMultipartUpload from outside the daemon (`spoold purge`): signed requests over a
/// transport of its own (URLSession, or libcurl for a private CA), up to `concurrency` at once, each waited for no longer than
/// its deadline, so a store that is down cannot hold up a purge of many items for long (one at a
/// time, 100 items against a silent store took 1,000 s).
public enum S3UploadAbort {
    /// One multipart upload to abort.
    public struct Upload: Sendable {
        public var uploadID: String
        public var url: String
        public var id: ItemID
        public var signer: SigV4Signer

        public init(uploadID: String, url: String, id: ItemID, signer: SigV4Signer) {
            (self.uploadID, self.url, self.id, self.signer) = (uploadID, url, id, signer)
        }
    }

    /// Most aborts in flight at once.
    public static let concurrency = 8

    /// The default transport for `count` aborts: URLSession, one connection per abort in flight.
    public static func urlSessionTransport(for count: Int, timeoutSeconds: Double) -> URLSessionTransport {
        URLSessionTransport(
            concurrency: max(1, min(concurrency, count)), deadlineSeconds: timeoutSeconds, idleSeconds: timeoutSeconds)
    }

    /// Whether the store confirmed each abort (2xx, or 404: the upload is gone anyway), in order.
    /// `transport`: made for the aborts, with `timeoutSeconds` as its deadline and idle timeout
    /// (`urlSessionTransport`, or `CurlTransport` for `--transport curl`).
    public static func abort(
        _ uploads: [Upload], transport: any UploadTransport, clock: any Clock, timeoutSeconds: Double
    ) -> [Bool] {
        guard !uploads.isEmpty else { return [] }
        let slots = DispatchSemaphore(value: concurrency)
        let finished = DispatchGroup()
        let confirmed = Mutex([Bool](repeating: false, count: uploads.count))
        for (i, upload) in uploads.enumerated() {
            // Each abort's deadline starts when it is sent, so none waits in a queue against it.
            guard slots.wait(timeout: .now() + timeoutSeconds + 1) == .success else { break }
            finished.enter()
            S3MultipartAttempt.abort(
                uploadID: upload.uploadID, url: upload.url, id: upload.id, transport: transport, signer: upload.signer,
                clock: clock, deadlineSeconds: timeoutSeconds
            ) { outcome in
                confirmed.withLock { $0[i] = AbortSchedule.judge(outcome) == .confirmed }
                slots.signal()
                finished.leave()
            }
        }
        _ = finished.wait(timeout: .now() + timeoutSeconds + 1)
        return withExtendedLifetime(transport) { confirmed.withLock { $0 } }
    }
}
