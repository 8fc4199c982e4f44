import Foundation
import SpoolCore
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads to an S3-compatible store: signs each attempt (SigV4) and hands it to the HTTP
/// transport underneath, then classes the answer by S3's error code.
///
/// A layer, not a second transport: the request is the one the engine built (its URL already
/// the object's path-style or virtual-hosted URL), with the SigV4 headers added. The payload is
/// hashed before the request — `x-amz-content-sha256`, which S3 checks against what arrives, so
/// the hash doubles as an integrity check; a compressed body is hashed in its coded form, which
/// measures it too — and the signature is made right after, with the time
/// of sending: every attempt, retries included, is signed fresh. Hashing runs on one serial queue
/// of its own, like `--content-digest`, so CPU-bound blocks never starve Dispatch's small pool.
/// Credentials live only in `signing`; headers are never logged. Credentials read from a file
/// are read again before each request once the store refused them (`rereadCredentials`): a file
/// rewritten with new temporary credentials ends the pause at the next probe, without a restart. Blobs larger than the part size
/// go up as a multipart upload within the attempt (`S3MultipartAttempt`, the driver of `S3MultipartUpload`), each part hashed and
/// signed on its own and sent through the same transport underneath, and resumed from the item's
/// part log on a later attempt.
public final class S3SigningTransport: UploadTransport, @unchecked Sendable {
    private let inner: any UploadTransport
    /// The signer of the next request, and whether the store refused its credentials (until an
    /// answer that does not): then each request first has them read again.
    private let signing: Mutex<(signer: SigV4Signer, refused: Bool)>
    /// Reads the credentials again (their file); nil when they came from the environment.
    private let rereadCredentials: (@Sendable () -> AWSCredentials?)?
    private let clock: any Clock
    private let hashing = DispatchQueue(label: "spoold.transport.s3-payload")
    /// Attempts still being hashed, with whether `cancelAll` asked them to stop.
    private let waiting = Mutex<[Int: Bool]>([:])
    private let nextKey = Mutex(0)
    private let multipart: Multipart?
    /// Multipart uploads in progress, for `cancelAll`.
    private let multipartUploads = Mutex<[Int: S3MultipartAttempt]>([:])
    /// The daemon's request rate, which paces the steps of multipart uploads after their first.
    private let pacer: RequestPacer?

    /// Blobs larger than `partSize` go up as a multipart upload.
    public struct Multipart: Sendable {
        public var partSize: Int64
        public var concurrency: Int
        /// `--timeout`: each step's deadline (the transport's), and the bound of an abort's.
        public var deadlineSeconds: Double

        public init(partSize: Int64, concurrency: Int, deadlineSeconds: Double) {
            (self.partSize, self.concurrency, self.deadlineSeconds) = (partSize, concurrency, deadlineSeconds)
        }
    }

    /// - Parameter rereadCredentials: called before each request while the store refuses the
    ///   credentials (a configuration problem, `S3ErrorClassifier`); new ones it returns sign it.
    public init(
        wrapping inner: any UploadTransport, signer: SigV4Signer, clock: any Clock, multipart: Multipart? = nil,
        rereadCredentials: (@Sendable () -> AWSCredentials?)? = nil, pacer: RequestPacer? = nil
    ) {
        (self.inner, self.clock, self.multipart, self.rereadCredentials) = (inner, clock, multipart, rereadCredentials)
        self.pacer = pacer
        signing = Mutex((signer, false))
    }

    /// Parts of one item in flight at once: `--concurrency`, at most 16 (each holds a
    /// connection; memory does not grow with it, since parts stream from the blob).
    public static func partsInFlight(_ concurrency: Int) -> Int { min(max(1, concurrency), 16) }

    /// Connections the transport underneath needs for `concurrency` items at once when each may
    /// send `partsInFlight` parts: a part that waits for a connection would spend its deadline.
    public static func connections(forConcurrency concurrency: Int) -> Int {
        min(partsInFlight(concurrency) * max(1, concurrency), 256)
    }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        guard let origin = HTTPOrigin(request.url) else {
            completion(.refusal(.urlRefused, "invalid upload URL '\(request.url)'"))
            return
        }
        // Checked before anything is signed (every x-amz-* header is, with the daemon's key), and
        // for a multipart upload before CreateMultipartUpload, which carries the item's headers.
        if let problem = request.headerProblem ?? request.headers.keys.sorted().lazy.compactMap(S3ItemHeaderRule.neverProblem).first {
            request.release()
            completion(UploadRequest.refusedHeaders(problem))
            return
        }
        let key = nextKey.withLock { key in
            key += 1
            return key
        }
        let signer = currentSigner()
        if let multipart, request.size > multipart.partSize {
            let upload = S3MultipartAttempt(
                request, preferredPartSize: multipart.partSize, concurrency: S3SigningTransport.partsInFlight(multipart.concurrency),
                transport: inner, signer: signer, clock: clock, deadlineSeconds: multipart.deadlineSeconds, work: hashing,
                pacer: pacer
            ) { [self] outcome in
                multipartUploads.withLock { _ = $0.removeValue(forKey: key) }
                completion(notingCredentialRefusal(outcome))
            }
            multipartUploads.withLock { $0[key] = upload }
            hashing.async { upload.start() }
            return
        }
        waiting.withLock { $0[key] = false }
        hashing.async { [self] in
            // A compressed body is measured by the same read: S3 wants its length up front.
            let measured: UploadRequest
            let payloadHash: String
            do {
                let (request, sha256) = try request.measured(hashing: true)
                (measured, payloadHash) = (request, SigV4Signer.hex(sha256 ?? []))
            } catch {
                waiting.withLock { _ = $0.removeValue(forKey: key) }
                completion(.failed(.bodyUnhashable("hash the payload for S3", "\(error)")))
                return
            }
            guard waiting.withLock({ $0.removeValue(forKey: key) }) == false else {
                completion(.cancelled)
                return
            }
            var signed = measured
            // Signed for this host and path: a redirect would carry the signature (and the body)
            // somewhere it was not made for. No S3 request follows one; the 3xx is the outcome.
            signed.followsRedirects = false
            let (path, query) = S3SigningTransport.pathAndQuery(of: request.url)
            let headers = signer.headers(
                method: request.method, host: S3SigningTransport.hostHeader(origin), path: path, query: query,
                payloadHash: payloadHash, date: clock.now(), own: request.headers)
            // A configured header of the same name must not replace a signed one.
            let names = Set(headers.keys.map { $0.lowercased() })
            signed.headers = signed.headers.filter { !names.contains($0.key.lowercased()) }
            for (name, value) in headers { signed.headers[name] = value }
            inner.start(signed) { [self] outcome in completion(notingCredentialRefusal(S3ErrorClassifier.judge(outcome))) }
        }
    }

    /// `outcome` as it is, noting whether the store refused the credentials (an answer that does
    /// not ends that), so the next request reads them again (`currentSigner`).
    private func notingCredentialRefusal(_ outcome: UploadOutcome) -> UploadOutcome {
        if rereadCredentials != nil, outcome.answer != nil {
            let refused = S3ErrorClassifier.refusesCredentials(outcome)
            signing.withLock { $0.refused = refused }
        }
        return outcome
    }

    /// The signer for the next request: while the store refuses the credentials, with them read
    /// again first (a probe every few seconds at most: the outage paces it).
    private func currentSigner() -> SigV4Signer {
        if let rereadCredentials, signing.withLock({ $0.refused }), let fresh = rereadCredentials() {
            signing.withLock { $0.signer.credentials = fresh }
        }
        return signing.withLock { $0.signer }
    }

    public func shutdown() { inner.shutdown() }

    public func cancelAll() {
        waiting.withLock { all in for key in all.keys { all[key] = true } }
        for upload in multipartUploads.withLock({ Array($0.values) }) { upload.cancel() }
        inner.cancelAll()
    }

    /// AbortMultipartUpload of `abort`, signed with the current credentials for the region the
    /// upload was created in, within `--timeout` (at most 30 s).
    public func abortUpload(_ abort: OwedAbort, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        // A tus upload's (a log of the other kind given up): its server is no S3 store, and gets
        // no request signed with the store's key. Held for a start with a tus+ URL.
        guard abort.kind == .s3Multipart else {
            completion(.refusal(.unsupported, "spoold is not uploading to a tus server: it cannot terminate tus upload \(abort.uploadID)"))
            return
        }
        var signer = currentSigner()
        signer.region = abort.region
        S3MultipartAttempt.abort(
            uploadID: abort.uploadID, url: abort.url, id: abort.id, transport: inner, signer: signer, clock: clock,
            deadlineSeconds: min(multipart?.deadlineSeconds ?? 30, 30), then: completion)
    }

    /// The `Host` header the HTTP client sends for `origin`: the port only when not the default.
    static func hostHeader(_ origin: HTTPOrigin) -> String {
        origin.port == (origin.scheme == "https" ? 443 : 80) ? origin.host : "\(origin.host):\(origin.port)"
    }

    /// The path (as sent, still percent-encoded) and the raw query of an absolute URL.
    static func pathAndQuery(of url: String) -> (path: String, query: String) {
        guard let schemeEnd = url.firstRange(of: "://") else { return ("/", "") }
        let afterAuthority = url[schemeEnd.upperBound...].drop { $0 != "/" && $0 != "?" && $0 != "#" }
        let withoutFragment = afterAuthority.prefix { $0 != "#" }
        let path = withoutFragment.prefix { $0 != "?" }
        let query = withoutFragment.dropFirst(path.count).dropFirst()
        return (path.isEmpty ? "/" : String(path), String(query))
    }
}
