import SpoolCore

/// Everything the transport needs to send one attempt of one item.
public struct UploadRequest: Sendable {
    /// What a request sends as its body.
    public enum Payload: Sendable {
        /// The whole blob (inside `form`'s frame with `--form`).
        case blob
        /// `length` bytes of the blob from `offset`: one part of an S3 multipart upload.
        case range(offset: Int64, length: Int64)
        /// A few bytes held in memory: an S3 request's XML (empty for CreateMultipartUpload).
        case bytes([UInt8])
        /// No body at all (ListParts, AbortMultipartUpload).
        case none
    }

    public var id: ItemID
    public var attempt: Int
    public var url: String
    /// `PUT` or `POST` for an item; also `GET` and `DELETE` for the steps of a multipart upload.
    public var method: String
    /// The blob, opened and checked by the spool; the transport reads it and closes it when the
    /// attempt ends (unless `ownsBody` is false). Its `size` is the item's.
    public var body: BlobBody
    public var contentType: String
    /// Extra headers (item and command line); `Idempotency-Key` is added by the transport.
    public var headers: [String: String]
    /// With `--form`: send `multipart/form-data` with the blob as a file part.
    public var form: MultipartForm?
    /// With `--content-digest`: send an RFC 9530 `Content-Digest` over the exact body (the
    /// multipart body when there is one, compressed when it is), computed before the request.
    public var contentDigest: ContentDigest?
    /// With `--compress`: the body (the blob with its frame, or an S3 part's range) is sent in
    /// this coding, made while it is read (`GzipStream`); whoever sets it also sets the
    /// `Content-Encoding` header where it belongs (the item's request; for an S3 multipart
    /// upload, CreateMultipartUpload's). Nil: the body as it is.
    public var compression: ContentCoding?
    /// With `compression`: the coded body's length, once measured (`prepared`); nil before.
    public var codedLength: Int64?
    /// With `compression`: the least number of bytes the coded body sends (an S3 part that is not
    /// the last is padded to S3's smallest part: `GzipStream`).
    public var codedMinimum: Int64 = 0
    /// Where an S3 multipart upload or a tus upload has its progress recorded (the item's part
    /// log, written by the daemon: `PartRecorder`); nil for items too small for a multipart
    /// upload, and for HTTP targets.
    public var partRecorder: (any PartRecorder)?
    /// The item's path below incoming/ (its bytes), which a tus upload sends as its `filename`.
    public var uploadName: [UInt8] = []
    /// Told what an S3 multipart upload did beyond its outcome (resumed, started over, checked a
    /// completion with the store, owes an abort), on any thread; nil: nobody listens.
    public var multipartNotes: (@Sendable (MultipartNote) -> Void)?

    // What the steps of an S3 multipart upload ask of the transport underneath; an item's own
    // request keeps the defaults.

    /// The body sent: the whole blob, unless a multipart step sends a range of it or its own bytes.
    public var payload = Payload.blob
    /// Whether the transport closes `body` when the request ends. The parts of one upload share
    /// the blob's descriptor: the upload closes it once, when its attempt ends.
    public var ownsBody = true
    /// Bytes of the answer kept in the outcome's `HTTPAnswer.body` at least (an S3 step's XML); the
    /// answer is still cut at 1 MiB, whose status then is the outcome.
    public var answerKeep = 0
    /// Whether a redirect `RedirectPolicy` allows is followed; false: a 3xx is the outcome.
    public var followsRedirects = true
    /// This request's deadline when shorter than the transport's (`--timeout`).
    public var deadlineSeconds: Double?
    /// Lets the sender cancel this one request (`cancelAll` cancels every one).
    public var cancellation: RequestCancellation?

    public var size: Int64 { body.size }

    /// Bytes the body sends.
    public var bodyLength: Int64 {
        switch payload {
        case .blob: Int64(form?.preamble.count ?? 0) + body.size + Int64(form?.epilogue.count ?? 0)
        case .range(_, let length): length
        case .bytes(let bytes): Int64(bytes.count)
        case .none: 0
        }
    }

    /// The body the request sends (framing bytes and a byte range of the blob, in `compression`
    /// when set), nil for `.none`. A compressed body's length is known once measured
    /// (`prepared`); unmeasured, it says the content's, and reading it fails at the first
    /// difference instead of sending a body its `Content-Length` does not describe.
    public var requestBody: RequestBody? {
        let parts: [RequestBody.Part]
        switch payload {
        case .blob:
            parts = form.map { [.bytes($0.preamble), .blob(body, offset: 0, length: body.size), .bytes($0.epilogue)] }
                ?? [.blob(body, offset: 0, length: body.size)]
        case .range(let offset, let length): parts = [.blob(body, offset: offset, length: length)]
        case .bytes(let bytes): return RequestBody([.bytes(bytes)])
        case .none: return nil
        }
        guard let compression else { return RequestBody(parts) }
        return RequestBody(parts, coding: compression, padTo: codedMinimum, length: codedLength ?? PartCursor(parts).contentLength)
    }

    /// Whether the body must be read once before it is sent: compressed and not measured yet.
    public var needsMeasuring: Bool { requestBody?.coding != nil && codedLength == nil }

    /// The request ready to send, with what the reading found: a compressed body measured (its
    /// coded length), and the `Content-Digest` value (`--content-digest`) of the bytes sent. Reads
    /// the body once (both at once when both are wanted); CPU-bound: not on a transport's own thread.
    public func prepared() throws -> (request: UploadRequest, contentDigest: String?) {
        let (request, sha256) = try measured(hashing: contentDigest != nil)
        guard let contentDigest, let sha256 else { return (request, nil) }
        return (request, contentDigest.headerValue(digest: sha256))
    }

    /// The request with a compressed body measured, and the SHA-256 of the exact bytes the body
    /// sends when `hashing` (S3's payload hash, `Content-Digest`).
    public func measured(hashing: Bool) throws -> (request: UploadRequest, sha256: [UInt8]?) {
        guard let body = requestBody, let coding = body.coding else {
            return (self, hashing ? try BodyDigest.sha256(of: requestBody?.parts ?? []) : nil)
        }
        let (length, digest) = try BodyDigest.measure(body.parts, coding: coding, padTo: body.padTo, hashing: hashing ? BulkSHA256() : nil)
        var measured = self
        measured.codedLength = length
        return (measured, digest)
    }

    /// The attempt this request starts (`HTTPAttempt`), with the transport's deadline (this
    /// request's own when shorter), redirect rules and answer bytes kept for its rules.
    public func attempt(deadlineSeconds: Double, redirects: RedirectPolicy, answerLimit: Int) -> HTTPAttempt.Request {
        HTTPAttempt.Request(
            method: method, url: url, headers: headers, contentType: form?.headerValue ?? contentType, idempotencyKey: id.rawValue,
            bodyLength: requestBody?.length, wantsContentDigest: contentDigest != nil, measuresBody: needsMeasuring,
            followsRedirects: followsRedirects,
            redirects: redirects, answerKeep: max(answerLimit, answerKeep), deadlineSeconds: min(deadlineSeconds, self.deadlineSeconds ?? deadlineSeconds))
    }


    /// Why this request's headers must not go on the wire (`HeaderRule.requestProblem` over its
    /// headers and the `Content-Type` it sends), or nil: `HTTPAttempt` asks before anything is
    /// sent, and the S3 layer before anything is signed.
    public var headerProblem: String? {
        HeaderRule.requestProblem(headers: headers, contentType: form?.headerValue ?? contentType)
    }

    /// The outcome of a request refused by `headerProblem`: final, nothing was sent.
    public static func refusedHeaders(_ problem: String) -> UploadOutcome {
        .refusal(.headerRefused, "not sent: \(problem)")
    }

    /// SHA-256 of the exact bytes the body sends (`BodyDigest`; compressed when it is).
    public func bodySHA256() throws -> [UInt8] { try measured(hashing: true).sha256 ?? [] }

    public init(
        id: ItemID, attempt: Int, url: String, method: String, body: BlobBody, contentType: String,
        headers: [String: String], form: MultipartForm? = nil
    ) {
        (self.id, self.attempt, self.url, self.method) = (id, attempt, url, method)
        (self.body, self.contentType, self.headers, self.form) = (body, contentType, headers, form)
    }

    /// Ends the request's hold on the blob: closes it if the request owns it.
    public func release() { if ownsBody { body.close() } }
}
