import Foundation
import Glibc
import SpoolCore
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt of an S3 multipart upload: CreateMultipartUpload, each part in order
/// (UploadPart), CompleteMultipartUpload — every request signed when it is sent.
///
/// Within one attempt only: nothing of the upload (its id, the parts done) is kept in the spool,
/// so a failed or interrupted attempt starts over with a new upload, and the failed one is
/// aborted (AbortMultipartUpload, best effort). Durable, resumable parts are future work
/// (RELIABILITY rule 13). Memory: one part's bytes at a time (`--s3-part-size`).
/// Each request has the attempt's `--timeout` as its own deadline, enforced here.
final class S3MultipartUpload: @unchecked Sendable {
    private let request: UploadRequest
    private let plan: S3PartPlan
    private let session: URLSession
    private let signer: SigV4Signer
    private let clock: any Clock
    private let deadlineSeconds: Double
    /// Where part files are read and hashed: never the session's delegate queue.
    private let work: DispatchQueue
    private let completion: @Sendable (UploadOutcome) -> Void

    private struct State {
        var task: URLSessionTask?
        /// Counts requests, so a deadline timer only cancels the request it was made for.
        var generation = 0
        var cancelled = false
        var timedOut = false
        var finished = false
        var uploadID: String?
        var etags: [String] = []
    }
    private let state = Mutex(State())

    init(
        _ request: UploadRequest, plan: S3PartPlan, session: URLSession, signer: SigV4Signer, clock: any Clock,
        deadlineSeconds: Double, work: DispatchQueue, completion: @escaping @Sendable (UploadOutcome) -> Void
    ) {
        (self.request, self.plan, self.session, self.signer, self.clock) = (request, plan, session, signer, clock)
        (self.deadlineSeconds, self.work, self.completion) = (deadlineSeconds, work, completion)
    }

    func start() {
        var headers = ["Content-Type": request.contentType]
        for (name, value) in request.headers { headers[name] = value }
        send(method: "POST", query: "uploads=", body: Data(), headers: headers) { [self] data, _ in
            let text = String(decoding: data.prefix(64 * 1024), as: UTF8.self)
            guard let id = S3PartPlan.element("UploadId", in: text) else {
                finish(.status(502, excerpt: "CreateMultipartUpload answered without an UploadId"))
                return
            }
            state.withLock { $0.uploadID = id }
            work.async { self.sendPart(1) }
        }
    }

    func cancel() {
        let task: URLSessionTask? = state.withLock { s in
            s.cancelled = true
            return s.task
        }
        task?.cancel()
    }

    private var uploadIDQuery: String {
        "uploadId=" + URLTemplate.encodePathSegment(state.withLock { $0.uploadID } ?? "")
    }

    /// Reads part `number` from the blob and sends it; the next part follows its answer.
    private func sendPart(_ number: Int) {
        let (offset, length) = plan.range(ofPart: number)
        let body: Data
        do {
            body = try S3MultipartUpload.read(request.body, offset: offset, length: length)
        } catch {
            abortThenFinish(.network("could not read part \(number) of the payload: \(error)"))
            return
        }
        send(method: "PUT", query: "partNumber=\(number)&" + uploadIDQuery, body: body, headers: [:]) { [self] _, response in
            guard let etag = response.value(forHTTPHeaderField: "ETag"), !etag.isEmpty else {
                abortThenFinish(.status(502, excerpt: "UploadPart \(number) answered without an ETag"))
                return
            }
            state.withLock { $0.etags.append(etag) }
            if number < plan.partCount {
                work.async { self.sendPart(number + 1) }
            } else {
                work.async { self.complete() }
            }
        }
    }

    private func complete() {
        let etags = state.withLock { $0.etags }
        let body = Data(S3PartPlan.completionBody(etags: etags).utf8)
        send(method: "POST", query: uploadIDQuery, body: body, headers: ["Content-Type": "application/xml"]) { [self] data, response in
            // S3 may answer 200 and still report an error in the body.
            let excerpt = URLSessionTransport.excerpt(data)
            if S3ErrorClassifier.errorCode(in: excerpt) != nil, S3PartPlan.element("ETag", in: excerpt ?? "") == nil {
                abortThenFinish(.status(500, excerpt: excerpt))
                return
            }
            finish(.status(response.statusCode, excerpt: excerpt))
        }
    }

    /// Signs and sends one request; `then` gets 2xx answers, anything else ends the attempt.
    private func send(
        method: String, query: String, body: Data, headers: [String: String],
        then: @escaping @Sendable (Data, HTTPURLResponse) -> Void
    ) {
        guard let origin = HTTPOrigin(request.url), let url = URL(string: request.url + "?" + query) else {
            finish(.refused("invalid upload URL '\(request.url)'"))
            return
        }
        let (path, _) = S3SigningTransport.pathAndQuery(of: request.url)
        let payloadHash = SigV4Signer.hex(body.withUnsafeBytes { bytes in
            var hasher = SHA256()
            hasher.update(bytes)
            return hasher.finalize()
        })
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = method
        urlRequest.setValue(SpooldVersion.userAgent, forHTTPHeaderField: "User-Agent")
        let signed = signer.headers(
            method: method, host: S3SigningTransport.hostHeader(origin), path: path, query: query,
            payloadHash: payloadHash, date: clock.now())
        let names = Set(signed.keys.map { $0.lowercased() })
        for (name, value) in headers where !names.contains(name.lowercased()) { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in signed { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let task = session.uploadTask(with: urlRequest, from: body) { [self] data, response, error in
            let (timedOut, cancelled) = state.withLock { s in
                s.task = nil
                return (s.timedOut, s.cancelled)
            }
            if let http = response as? HTTPURLResponse, error == nil {
                if (200..<300).contains(http.statusCode) {
                    then(data ?? Data(), http)
                } else {
                    abortThenFinish(.status(http.statusCode, excerpt: URLSessionTransport.excerpt(data)))
                }
            } else if cancelled {
                finish(.cancelled)
            } else if timedOut {
                abortThenFinish(.network(
                    "no complete answer within the \(URLSessionTransport.seconds(deadlineSeconds)) deadline (--timeout)"))
            } else {
                abortThenFinish(URLSessionTransport.networkOutcome(error))
            }
        }
        let go: Bool = state.withLock { s in
            guard !s.cancelled, !s.finished else { return false }
            s.task = task
            s.generation += 1
            let generation = s.generation
            work.asyncAfter(deadline: .now() + deadlineSeconds) { [weak self] in self?.expire(generation) }
            return true
        }
        if go { task.resume() } else {
            task.cancel()
            finish(.cancelled)
        }
    }

    private func expire(_ generation: Int) {
        let task: URLSessionTask? = state.withLock { s in
            guard s.generation == generation, let task = s.task else { return nil }
            s.timedOut = true
            return task
        }
        task?.cancel()
    }

    /// Aborts the upload (when one was created), then reports `outcome`. The request is made
    /// on `work`, never on the session's delegate queue this is called from.
    private func abortThenFinish(_ outcome: UploadOutcome) {
        work.async { self.abort(then: outcome) }
    }

    private func abort(then outcome: UploadOutcome) {
        guard let origin = HTTPOrigin(request.url), state.withLock({ $0.uploadID != nil && !$0.cancelled }),
              let url = URL(string: request.url + "?" + uploadIDQuery)
        else {
            finish(outcome)
            return
        }
        let (path, _) = S3SigningTransport.pathAndQuery(of: request.url)
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = "DELETE"
        urlRequest.timeoutInterval = min(deadlineSeconds, 30)
        for (name, value) in signer.headers(
            method: "DELETE", host: S3SigningTransport.hostHeader(origin), path: path, query: uploadIDQuery,
            payloadHash: SigV4Signer.emptyPayloadHash, date: clock.now())
        {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        // Best effort: a store that keeps the parts anyway is cleaned by a lifecycle rule (README).
        session.dataTask(with: urlRequest) { [self] _, _, _ in finish(outcome) }.resume()
    }

    private func finish(_ outcome: UploadOutcome) {
        let first: Bool = state.withLock { s in
            defer { s.finished = true }
            return !s.finished
        }
        if first { completion(S3ErrorClassifier.judge(outcome)) }
    }

    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    /// `length` bytes of the blob at `offset`, read from the descriptor the spool opened (never a
    /// path: a symlink swapped in after the claim is not followed), or an error if it is shorter.
    static func read(_ blob: BlobBody, offset: Int64, length: Int64) throws -> Data {
        var bytes = Data(count: Int(length))
        var total = 0
        while total < bytes.count {
            let n = bytes.withUnsafeMutableBytes { blob.read(into: $0.baseAddress! + total, count: $0.count - total, at: offset + Int64(total)) }
            guard n > 0 else { throw ReadError(description: blob.failure ?? "the payload is shorter than it was spooled") }
            total += n
        }
        return bytes
    }
}
