import Foundation
import Glibc
import SpoolCore
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt of an S3 multipart upload, resumed from the item's part log when it has one
/// (RELIABILITY rule 13).
///
/// - A log for this blob and object: ListParts (every page) checks that the upload still exists;
///   NoSuchUpload removes the log and starts over. Parts in the log that the store also lists
///   are done and never sent again; the others are sent.
/// - No log (or one for another object): CreateMultipartUpload, and the upload id is recorded
///   (fsynced) before the first part is sent.
/// - Parts go up `concurrency` at once, each hashed (its SigV4 payload hash, read 1 MiB at a time)
///   and then streamed from the blob's descriptor: memory stays flat whatever the part size.
///   A part counts once its ETag is recorded (fsynced) in the log; a crash re-sends at most the
///   parts in flight.
/// - All parts done: CompleteMultipartUpload with every part's ETag from the log.
///
/// The first part (or step) that fails ends the attempt: the parts still in flight are cancelled
/// and the upload is kept for the next attempt. Without a log (`request.partJournal` nil), a
/// failed attempt aborts its upload instead. Everything here runs on `work`, one serial queue,
/// so a part is never recorded after the attempt has reported.
final class S3MultipartUpload: @unchecked Sendable {
    /// Parts asked for per ListParts page: its answer fits `S3RequestSession.answerLimit`.
    static let listPage = 500

    private let request: UploadRequest
    private let preferredPartSize: Int64
    private let concurrency: Int
    private let session: S3RequestSession
    private let signer: SigV4Signer
    private let clock: any Clock
    private let deadlineSeconds: Double
    private let work: DispatchQueue
    private let journal: (any PartJournal)?
    private let completion: @Sendable (UploadOutcome) -> Void

    // Only touched on `work`.
    private var plan: S3PartPlan
    private var uploadID: String?
    private var done: [Int: String] = [:]
    private var waiting: [Int] = []
    /// Requests in flight: part number (0 for the other steps) → the session's handle.
    private var inFlight: [Int: Int] = [:]
    private var finished = false

    init(
        _ request: UploadRequest, preferredPartSize: Int64, concurrency: Int, session: S3RequestSession, signer: SigV4Signer,
        clock: any Clock, deadlineSeconds: Double, work: DispatchQueue, completion: @escaping @Sendable (UploadOutcome) -> Void
    ) {
        (self.request, self.preferredPartSize, self.concurrency, self.session) = (request, preferredPartSize, concurrency, session)
        (self.signer, self.clock, self.deadlineSeconds, self.work) = (signer, clock, deadlineSeconds, work)
        self.journal = request.partJournal
        self.completion = completion
        plan = S3PartPlan(size: request.size, preferredPartSize: preferredPartSize)
    }

    /// On `work`.
    func start() {
        guard let recorded = journal?.load() else {
            create()
            return
        }
        guard recorded.size == request.size, recorded.url == request.url, recorded.region == signer.region else {
            // An upload for another object (the URL or the region changed): abandoned.
            abort(uploadID: recorded.uploadID, url: recorded.url)
            journal?.discard()
            create()
            return
        }
        plan = recorded.plan
        uploadID = recorded.uploadID
        listParts(marker: 0, listed: [:], recorded: recorded.parts)
    }

    /// Ends the attempt with `.cancelled` (the daemon is stopping); the upload is kept.
    func cancel() {
        work.async { self.fail(.cancelled, abortUpload: false) }
    }

    private var uploadIDQuery: String { "uploadId=" + URLTemplate.encodePathSegment(uploadID ?? "") }

    // MARK: Steps

    private func create() {
        var headers = ["Content-Type": request.contentType]
        for (name, value) in request.headers { headers[name] = value }
        send(step: 0, method: "POST", query: "uploads=", body: [], headers: headers) { [self] answer in
            guard let id = S3PartPlan.element("UploadId", in: answer.text) else {
                fail(.status(502, excerpt: "CreateMultipartUpload answered without an UploadId"), abortUpload: false)
                return
            }
            uploadID = id
            if let journal {
                journal.reached(.created)
                do {
                    try journal.begin(.init(size: plan.size, partSize: plan.partSize, region: signer.region, uploadID: id, url: request.url))
                } catch {
                    // Unrecorded, the upload could never be resumed: aborted.
                    fail(S3MultipartUpload.journalFailure(error, what: "the multipart upload"), abortUpload: true)
                    return
                }
            }
            sendParts()
        }
    }

    /// Reads every page of ListParts, then keeps the recorded parts the store still has.
    private func listParts(marker: Int, listed: [Int: String], recorded: [Int: String]) {
        let query = "max-parts=\(S3MultipartUpload.listPage)&part-number-marker=\(marker)&" + uploadIDQuery
        send(step: 0, method: "GET", query: query, body: nil, headers: [:], notFound: { [self] in
            // The upload is gone (aborted, expired, or completed before a crash): start over.
            journal?.discard()
            uploadID = nil
            create()
        }) { [self] answer in
            var listed = listed
            let text = answer.text
            for part in S3MultipartUpload.elements("Part", in: text) {
                if let number = S3PartPlan.element("PartNumber", in: part).flatMap(Int.init), let etag = S3PartPlan.element("ETag", in: part) {
                    listed[number] = etag
                }
            }
            // Pages past the plan's last part cannot hold a part of ours: a server that keeps
            // saying "truncated" cannot keep the attempt going.
            if S3PartPlan.element("IsTruncated", in: text) == "true",
               let next = S3PartPlan.element("NextPartNumberMarker", in: text).flatMap(Int.init), next > marker,
               next < plan.partCount
            {
                listParts(marker: next, listed: listed, recorded: recorded)
                return
            }
            // Only what the log vouches for counts, and only if the store has it too.
            done = recorded.filter { number, etag in
                listed[number].map { S3MultipartUpload.unquoted($0) == S3MultipartUpload.unquoted(etag) } ?? false
            }
            sendParts()
        }
    }

    private func sendParts() {
        waiting = (1...plan.partCount).filter { done[$0] == nil }
        pump()
    }

    /// Starts parts until `concurrency` are in flight; completes when none is left.
    private func pump() {
        guard !finished else { return }
        while inFlight.count < concurrency, !waiting.isEmpty {
            sendPart(waiting.removeFirst())
            if finished { return }
        }
        if waiting.isEmpty && inFlight.isEmpty { complete() }
    }

    private func sendPart(_ number: Int) {
        let (offset, length) = plan.range(ofPart: number)
        let body = BodyInputStream.Part.range(request.body, offset: offset, length: length)
        send(step: number, method: "PUT", query: "partNumber=\(number)&" + uploadIDQuery, body: [body], headers: [:]) { [self] answer in
            guard let etag = answer.etag, !etag.isEmpty else {
                fail(.status(502, excerpt: "UploadPart \(number) answered without an ETag"), abortUpload: false)
                return
            }
            do {
                try journal?.record(part: number, etag: etag)
            } catch {
                fail(S3MultipartUpload.journalFailure(error, what: "part \(number)"), abortUpload: false)
                return
            }
            done[number] = etag
            pump()
        }
    }

    private func complete() {
        journal?.reached(.completing)
        let etags = (1...plan.partCount).map { done[$0] ?? "" }
        let body = Array(S3PartPlan.completionBody(etags: etags).utf8)
        send(step: 0, method: "POST", query: uploadIDQuery, body: [.bytes(body)], headers: ["Content-Type": "application/xml"]) { [self] answer in
            // S3 may answer 200 and still report an error in the body.
            let excerpt = URLSessionTransport.excerpt(answer.body)
            if S3ErrorClassifier.errorCode(in: excerpt) != nil, S3PartPlan.element("ETag", in: excerpt ?? "") == nil {
                fail(.status(500, excerpt: excerpt), abortUpload: false)
                return
            }
            journal?.reached(.completed)
            finish(.status(answer.status, excerpt: excerpt))
        }
    }

    // MARK: Requests

    /// Signs and sends one request. `then` gets 2xx answers (on `work`); a 404 NoSuchUpload goes
    /// to `notFound` when given; anything else ends the attempt.
    private func send(
        step: Int, method: String, query: String, body: [BodyInputStream.Part]?, headers: [String: String],
        notFound: (@Sendable () -> Void)? = nil, then: @escaping @Sendable (S3RequestSession.Answer) -> Void
    ) {
        guard !finished else { return }
        guard let origin = HTTPOrigin(request.url), let url = URL(string: request.url + "?" + query) else {
            fail(.refused("invalid upload URL '\(request.url)'"), abortUpload: false)
            return
        }
        let parts = body ?? []
        let payloadHash: String
        do {
            payloadHash = parts.isEmpty ? SigV4Signer.emptyPayloadHash : SigV4Signer.hex(try BodyDigest.sha256(of: parts))
        } catch {
            // The blob changed under us (rule 8): an item error, not the network's.
            fail(.refused(request.body.failure ?? "\(error)"), abortUpload: false)
            return
        }
        let (path, _) = S3SigningTransport.pathAndQuery(of: request.url)
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = method
        urlRequest.setValue(SpooldVersion.userAgent, forHTTPHeaderField: "User-Agent")
        let signed = signer.headers(
            method: method, host: S3SigningTransport.hostHeader(origin), path: path, query: query,
            payloadHash: payloadHash, date: clock.now())
        let names = Set(signed.keys.map { $0.lowercased() })
        for (name, value) in headers where !names.contains(name.lowercased()) { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in signed { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let stream: (@Sendable () -> InputStream)? = body == nil ? nil : { @Sendable in BodyInputStream(parts) }
        let handle = session.send(
            urlRequest, body: stream, length: BodyInputStream.length(of: parts), deadlineSeconds: deadlineSeconds
        ) { [self] result in
            work.async { [self] in
                inFlight[step] = nil
                guard !finished else { return }
                switch result {
                case .success(let answer) where (200..<300).contains(answer.status):
                    then(answer)
                case .success(let answer):
                    let excerpt = URLSessionTransport.excerpt(answer.body)
                    if answer.status == 404, let notFound, S3ErrorClassifier.errorCode(in: excerpt) == "NoSuchUpload" {
                        notFound()
                    } else {
                        fail(.status(answer.status, excerpt: excerpt), abortUpload: false)
                    }
                case .failure(.cancelled):
                    fail(.cancelled, abortUpload: false)
                case .failure(.timedOut):
                    fail(.network("no complete answer within the \(URLSessionTransport.seconds(deadlineSeconds)) deadline (--timeout)"),
                         abortUpload: false)
                case .failure(.network(let error)):
                    if let failure = request.body.failure {
                        fail(.refused(failure), abortUpload: false)
                    } else {
                        fail(URLSessionTransport.networkOutcome(error), abortUpload: false)
                    }
                }
            }
        }
        inFlight[step] = handle
    }

    /// Ends the attempt: cancels what is in flight; without a log (or when asked), aborts the
    /// upload, since no later attempt could resume it.
    private func fail(_ outcome: UploadOutcome, abortUpload: Bool) {
        guard !finished else { return }
        for handle in inFlight.values { session.cancel(handle) }
        inFlight.removeAll()
        if let uploadID, abortUpload || journal == nil, !outcome.wasCancelled {
            abort(uploadID: uploadID, url: request.url)
        }
        finish(outcome)
    }

    private func finish(_ outcome: UploadOutcome) {
        guard !finished else { return }
        finished = true
        request.body.close()
        completion(S3ErrorClassifier.judge(outcome))
    }

    /// AbortMultipartUpload, best effort: a store that keeps the parts anyway is cleaned by a
    /// lifecycle rule (README).
    private func abort(uploadID: String, url: String) {
        S3MultipartUpload.abort(
            uploadID: uploadID, url: url, session: session, signer: signer, clock: clock, deadlineSeconds: min(deadlineSeconds, 30)
        ) { _ in }
    }

    /// Sends AbortMultipartUpload for `uploadID` of the object at `url`; `then` gets whether the
    /// store confirmed (2xx, or 404: the upload is gone anyway).
    static func abort(
        uploadID: String, url: String, session: S3RequestSession, signer: SigV4Signer, clock: any Clock, deadlineSeconds: Double,
        then: @escaping @Sendable (Bool) -> Void
    ) {
        let query = "uploadId=" + URLTemplate.encodePathSegment(uploadID)
        guard let origin = HTTPOrigin(url), let target = URL(string: url + "?" + query) else {
            then(false)
            return
        }
        let (path, _) = S3SigningTransport.pathAndQuery(of: url)
        var urlRequest = URLRequest(url: target)
        urlRequest.httpMethod = "DELETE"
        urlRequest.setValue(SpooldVersion.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in signer.headers(
            method: "DELETE", host: S3SigningTransport.hostHeader(origin), path: path, query: query,
            payloadHash: SigV4Signer.emptyPayloadHash, date: clock.now())
        {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        session.send(urlRequest, body: nil, length: 0, deadlineSeconds: deadlineSeconds) { result in
            if case .success(let answer) = result { then((200..<300).contains(answer.status) || answer.status == 404) } else { then(false) }
        }
    }

    /// The outcome of a journal write that threw: a record too long for the log is the store's
    /// doing (retried like a bad answer); anything else is the spool failing, which stops the
    /// daemon (RELIABILITY rule 6), never a retry that trusts a second fsync.
    static func journalFailure(_ error: any Error, what: String) -> UploadOutcome {
        if let refusal = error as? PartJournalRefusal {
            return .status(502, excerpt: "cannot record \(what): \(refusal)")
        }
        return .spoolFailure("cannot record \(what) in the spool's part log: \(error)")
    }

    /// The contents of every `<Tag>…</Tag>` in an XML answer, in order.
    static func elements(_ tag: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = Substring(xml)
        while let open = rest.firstRange(of: "<\(tag)>"), let close = rest[open.upperBound...].firstRange(of: "</\(tag)>") {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    /// An ETag without its quotes (`&quot;` too): stores differ in how ListParts writes them.
    static func unquoted(_ etag: String) -> String {
        var text = etag.replacing("&quot;", with: "\"").replacing("&#34;", with: "\"")
        text.removeAll { $0 == "\"" }
        return text
    }
}
