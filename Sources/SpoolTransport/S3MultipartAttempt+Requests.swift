import Dispatch
import SpoolCore

/// The requests of an S3 multipart upload, apart from the driver that sends them in turn: one
/// step signed (`stepRequest`), and the abort of an upload, also sent with no attempt running
/// (the aborts the daemon owes, `S3SigningTransport.abortUpload`; `spoold purge`, `S3UploadAbort`).
extension S3MultipartAttempt {
    /// One step of the upload of `item`, signed: the object's URL with `query`, the body hashed
    /// (a part 1 MiB at a time; compressed with `item.compression`, and measured by that read).
    /// Shares the item's blob without owning it; follows no redirect; keeps `answerKeep` bytes of
    /// the answer. Nil when the URL is invalid or the blob cannot be read.
    static func stepRequest(
        _ item: UploadRequest, method: String, query: String, payload: UploadRequest.Payload, contentType: String,
        headers: [String: String], signer: SigV4Signer, clock: any Clock
    ) -> UploadRequest? {
        guard let origin = HTTPOrigin(item.url) else { return nil }
        var step = UploadRequest(
            id: item.id, attempt: item.attempt, url: query.isEmpty ? item.url : item.url + "?" + query, method: method, body: item.body,
            contentType: contentType, headers: [:])
        step.payload = payload
        step.ownsBody = false
        step.answerKeep = answerKeep
        step.followsRedirects = false
        if case .range(let offset, let length) = payload, let coding = item.compression {
            // One gzip member per part; every part but the last at least S3's smallest.
            step.compression = coding
            step.codedMinimum = offset + length < item.size ? S3PartPlan.minimumPartSize : 0
        }
        let payloadHash: String
        do {
            // A compressed part is measured by the same read: its Content-Length.
            let (measured, sha256) = try step.measured(hashing: true)
            step = measured
            payloadHash = SigV4Signer.hex(sha256 ?? [])
        } catch {
            return nil
        }
        let (path, _) = S3SigningTransport.pathAndQuery(of: item.url)
        let signed = signer.headers(
            method: method, host: S3SigningTransport.hostHeader(origin), path: path, query: query,
            payloadHash: payloadHash, date: clock.now(), own: headers)
        // A configured header of the same name must not replace a signed one.
        let names = Set(signed.keys.map { $0.lowercased() })
        for (name, value) in headers where !names.contains(name.lowercased()) { step.headers[name] = value }
        for (name, value) in signed { step.headers[name] = value }
        return step
    }

    /// Sends AbortMultipartUpload for `uploadID` of the object at `url` (item `id`'s) through
    /// `transport`; `then` gets the answer (`AbortSchedule.judge` says what it means).
    static func abort(
        uploadID: String, url: String, id: ItemID, transport: any UploadTransport, signer: SigV4Signer, clock: any Clock,
        deadlineSeconds: Double, then: @escaping @Sendable (UploadOutcome) -> Void
    ) {
        // No blob behind it: the request sends no body.
        let item = UploadRequest(
            id: id, attempt: 0, url: url, method: "DELETE", body: BlobBody.none, contentType: "application/xml", headers: [:])
        let query = "uploadId=" + URLTemplate.encodePathSegment(uploadID)
        guard var step = stepRequest(
            item, method: "DELETE", query: query, payload: .none, contentType: item.contentType, headers: [:], signer: signer, clock: clock)
        else {
            then(.refusal(.urlRefused, "invalid upload URL '\(url)'"))
            return
        }
        step.deadlineSeconds = deadlineSeconds
        transport.start(step, completion: then)
    }
}
