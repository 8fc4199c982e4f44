import SpoolCore
import XCTest

/// Every transition of `HTTPAttempt`, the rules both transports drive: events in, actions out.
final class HTTPAttemptTests: XCTestCase {
    private let date = Timestamp(millisecondsSinceEpoch: 1_795_430_559_000)

    private func request(
        method: String = "PUT", url: String = "http://up.example:8080/in/a.bin", headers: [String: String] = [:],
        bodyLength: Int64? = 10, digest: Bool = false, follows: Bool = true, keep: Int = 0
    ) -> HTTPAttempt.Request {
        HTTPAttempt.Request(
            method: method, url: url, headers: headers, contentType: "application/octet-stream", idempotencyKey: "id-1",
            bodyLength: bodyLength, wantsContentDigest: digest, followsRedirects: follows, answerKeep: keep, deadlineSeconds: 30)
    }

    /// An attempt started at t = 100 s with its first hop on the wire.
    private func sending(_ request: HTTPAttempt.Request? = nil) -> HTTPAttempt {
        var attempt = HTTPAttempt(request ?? self.request(), now: 100)
        guard case .send = attempt.start() else { XCTFail("not sent"); return attempt }
        return attempt
    }

    private func lines(_ attempt: inout HTTPAttempt, _ text: [String]) {
        for line in text {
            let bytes = Array((line + "\r\n").utf8)
            bytes.withUnsafeBufferPointer { attempt.answerHeaderLine(AnswerHeaderLine($0)) }
        }
    }

    private func body(_ attempt: inout HTTPAttempt, _ bytes: [UInt8]) -> HTTPAttempt.Action {
        bytes.withUnsafeBytes { attempt.answerBytes($0) }
    }

    private func outcome(_ action: HTTPAttempt.Action, file: StaticString = #filePath, line: UInt = #line) -> UploadOutcome? {
        guard case .finish(let outcome) = action else {
            XCTFail("expected the attempt to finish: \(action)", file: file, line: line)
            return nil
        }
        return outcome
    }

    // MARK: start

    func testStart_sendsTheFirstHop_withSpooldsHeadersLast() {
        var attempt = HTTPAttempt(request(headers: ["X-B": "2", "x-a": "1", "user-agent": "cam/7", "content-type": "text/plain"]), now: 100)
        guard case .send(let hop) = attempt.start() else { return XCTFail() }
        XCTAssertEqual(hop.url, "http://up.example:8080/in/a.bin")
        XCTAssertEqual(hop.number, 0)
        XCTAssertEqual(hop.headers.map(\.name), ["X-B", "user-agent", "x-a", "Content-Type", "Idempotency-Key"])
        XCTAssertEqual(hop.headers.first { $0.name == "user-agent" }?.value, "cam/7", "a request's User-Agent wins over spoold's")
        XCTAssertEqual(hop.headers.first { $0.name == "Content-Type" }?.value, "application/octet-stream", "no request header replaces spoold's")
        XCTAssertEqual(hop.headers.last?.value, "id-1")
        XCTAssertEqual(attempt.deadline, 130)
    }

    func testStart_refusesWhatCannotBeSent_beforeAnything() {
        var badURL = HTTPAttempt(request(url: "ftp://up.example/a"), now: 0)
        XCTAssertEqual(outcome(badURL.start()), .refusal(.urlRefused, "invalid upload URL 'ftp://up.example/a'"))
        var badHeader = HTTPAttempt(request(headers: ["X-Tag": "a\r\nHost: evil"]), now: 0)
        let refused = outcome(badHeader.start())
        XCTAssertEqual(refused?.class, .final)
        XCTAssertEqual(refused?.code, "header_refused")
        XCTAssertEqual(badHeader.cancel(), .none, "finished once")
    }

    func testContentDigest_isComputedFirst_andSentOnEveryHop() {
        var attempt = HTTPAttempt(request(digest: true), now: 0)
        XCTAssertEqual(attempt.start(), .prepareBody)
        XCTAssertNil(attempt.hop)
        guard case .send(let hop) = attempt.bodyPrepared(contentDigest: "sha-256=:abc=:") else { return XCTFail() }
        XCTAssertEqual(hop.headers.last, HeaderRule.Field(name: "Content-Digest", value: "sha-256=:abc=:"))
        lines(&attempt, ["HTTP/1.1 307 Temporary Redirect", "Location: /in/b.bin"])
        guard case .send(let next) = attempt.transferEnded(status: 307, error: nil, bodyFailure: nil, now: 1, date: date) else { return XCTFail() }
        XCTAssertEqual(next.headers.last?.value, "sha-256=:abc=:")

        var unreadable = HTTPAttempt(request(digest: true), now: 0)
        _ = unreadable.start()
        let failed = outcome(unreadable.bodyUnprepared("cannot read the body"))
        XCTAssertEqual(failed?.summary, "could not compute the Content-Digest: cannot read the body")
        XCTAssertEqual(failed?.class, .retryable)
    }

    /// A compressed body is measured before the first hop (its Content-Length), without a digest.
    func testCompressedBody_isMeasuredFirst_withoutADigest() {
        var compressed = HTTPAttempt(
            HTTPAttempt.Request(
                method: "PUT", url: "http://up.example/a.csv", headers: ["Content-Encoding": "gzip"], contentType: "text/csv",
                idempotencyKey: "id-1", bodyLength: 10, measuresBody: true, deadlineSeconds: 30), now: 0)
        XCTAssertEqual(compressed.start(), .prepareBody)
        guard case .send(let hop) = compressed.bodyPrepared(contentDigest: nil) else { return XCTFail() }
        XCTAssertFalse(hop.headers.contains { $0.name == "Content-Digest" })
        XCTAssertEqual(hop.headers.first { $0.name == "Content-Encoding" }?.value, "gzip")

        var unreadable = HTTPAttempt(
            HTTPAttempt.Request(
                method: "PUT", url: "http://up.example/a.csv", headers: [:], contentType: "text/csv", idempotencyKey: "id-1",
                bodyLength: 10, measuresBody: true, deadlineSeconds: 30), now: 0)
        _ = unreadable.start()
        XCTAssertEqual(outcome(unreadable.bodyUnprepared("shrank"))?.summary, "could not compress the body to measure it: shrank")
    }

    // MARK: answers

    func testAnswer_isTheOutcome_withWhatItKeeps() {
        var attempt = sending(request(keep: 4))
        lines(&attempt, ["HTTP/1.1 100 Continue", "Retry-After: 9", "", "HTTP/1.1 503 Slow Down", "Retry-After: 120", "ETag: \"e1\"",
                         "Content-Length: 12"])
        XCTAssertEqual(body(&attempt, Array("busy\tnow\nok\u{7F}".utf8)), .none)
        guard let answer = outcome(attempt.transferEnded(status: 503, error: nil, bodyFailure: nil, now: 101, date: date))?.answer
        else { return XCTFail() }
        XCTAssertEqual(answer.status, 503)
        XCTAssertEqual(answer.excerpt, "busy now ok", "one printable line")
        XCTAssertEqual(answer.retryAfterSeconds, 120, "the final answer's, not the 100's")
        XCTAssertEqual(answer.etag, "\"e1\"")
        XCTAssertEqual(answer.contentLength, 12)
        XCTAssertEqual(answer.body, Array("busy".utf8))
        XCTAssertTrue(answer.bodyTruncated)
        XCTAssertEqual(UploadOutcome.answered(answer).class, .throttled)
    }

    /// Past 1 MiB the answer is not read further: the transport is told once, and the status
    /// that arrived is the outcome.
    func testLongAnswer_isCut_andItsStatusIsTheOutcome() {
        var attempt = sending()
        lines(&attempt, ["HTTP/1.1 201 Created"])
        let piece = [UInt8](repeating: 120, count: 64 << 10)
        var actions: [HTTPAttempt.Action] = []
        for _ in 0..<20 { actions.append(body(&attempt, piece)) }
        XCTAssertEqual(actions.filter { $0 == .stopReading }.count, 1)
        XCTAssertEqual(actions.firstIndex(of: .stopReading), 16, "the piece that passed 1 MiB")
        let ended = outcome(attempt.transferEnded(status: 201, error: .stoppedOnRequest, bodyFailure: nil, now: 101, date: date))
        XCTAssertEqual(ended?.class, .success)
        XCTAssertEqual(ended?.responseExcerpt?.count, AnswerExcerpt.length)
    }

    /// The duplicates rule: a server that answered whole (nginx's early `return 201`, an HTTP/2
    /// stream reset after the answer) and then closed or reset the connection has answered; only
    /// an answer short of its Content-Length, or a HEAD's (whose length is the object's), is not.
    func testWholeAnswer_thenTheConnectionFails_isTheAnswer() {
        for error in [TransferError.connectionLost, .streamReset, .unnamed("Send failure: Broken pipe"), .timedOut] {
            var attempt = sending()
            lines(&attempt, ["HTTP/1.1 201 Created", "Content-Length: 0"])
            XCTAssertEqual(outcome(attempt.transferEnded(status: 201, error: error, bodyFailure: nil, now: 101, date: date))?.class, .success, "\(error)")
        }
        var short = sending()
        lines(&short, ["HTTP/1.1 200 OK", "Content-Length: 10"])
        _ = body(&short, Array("12345".utf8))
        let lost = outcome(short.transferEnded(status: 200, error: .connectionLost, bodyFailure: nil, now: 101, date: date))
        XCTAssertEqual(lost, .failed(.connectionLost))
        XCTAssertEqual(lost?.class, .retryable)
        var head = sending(request(method: "HEAD", bodyLength: nil))
        lines(&head, ["HTTP/1.1 200 OK", "Content-Length: 5000"])
        XCTAssertEqual(outcome(head.transferEnded(status: 200, error: .connectionLost, bodyFailure: nil, now: 101, date: date)), .failed(.connectionLost))
        var noLength = sending()
        lines(&noLength, ["HTTP/1.1 201 Created"])
        XCTAssertEqual(outcome(noLength.transferEnded(status: 201, error: .connectionLost, bodyFailure: nil, now: 101, date: date)), .failed(.connectionLost))
    }

    /// A blob that could not be read to its recorded size is the item's fault whatever the server
    /// said: final, whichever transport read it.
    func testUnreadableBody_isAFinalRefusal_evenAfterAnAnswer() {
        var attempt = sending()
        lines(&attempt, ["HTTP/1.1 201 Created", "Content-Length: 0"])
        let refused = outcome(attempt.transferEnded(
            status: 201, error: nil, bodyFailure: "its payload shrank while it was sent (ended at 4 B, spooled as 10 B)", now: 101, date: date))
        XCTAssertEqual(refused, .refusal(.blobChanged, "its payload shrank while it was sent (ended at 4 B, spooled as 10 B)"))
        XCTAssertEqual(refused?.class, .final)
    }

    // MARK: redirects

    func testRedirect_307SameOrigin_isAFreshHop_relativeLocationResolved() {
        var attempt = sending()
        lines(&attempt, ["HTTP/1.1 307 Temporary Redirect", "Location: ../moved/a.bin?x=1"])
        _ = body(&attempt, Array("see elsewhere".utf8))
        guard case .send(let hop) = attempt.transferEnded(status: 307, error: nil, bodyFailure: nil, now: 101, date: date) else { return XCTFail() }
        XCTAssertEqual(hop.url, "http://up.example:8080/moved/a.bin?x=1")
        XCTAssertEqual(hop.number, 1)
        XCTAssertTrue(attempt.awaitsHead, "a fresh answer for the new hop")
        lines(&attempt, ["HTTP/1.1 201 Created"])
        XCTAssertEqual(outcome(attempt.transferEnded(status: 201, error: nil, bodyFailure: nil, now: 102, date: date))?.class, .success)
    }

    func testRedirect_refusals_andTheHopLimit() {
        var found = sending()
        lines(&found, ["HTTP/1.1 302 Found", "Location: /x"])
        _ = body(&found, Array("moved".utf8))
        let refused = outcome(found.transferEnded(status: 302, error: nil, bodyFailure: nil, now: 101, date: date))
        XCTAssertEqual(refused?.code, "redirect_refused")
        XCTAssertEqual(refused?.httpStatus, 302)
        XCTAssertEqual(refused?.responseExcerpt, "moved")
        XCTAssertEqual(refused?.class, .final)

        var loop = sending()
        for hop in 1...RedirectPolicy.maximumHops {
            lines(&loop, ["HTTP/1.1 308 Permanent Redirect", "Location: /again/\(hop)"])
            guard case .send = loop.transferEnded(status: 308, error: nil, bodyFailure: nil, now: 101, date: date) else { return XCTFail("hop \(hop)") }
        }
        lines(&loop, ["HTTP/1.1 308 Permanent Redirect", "Location: /again/6"])
        XCTAssertEqual(outcome(loop.transferEnded(status: 308, error: nil, bodyFailure: nil, now: 101, date: date))?.code, "redirect_refused")

        var signed = sending(request(follows: false))
        lines(&signed, ["HTTP/1.1 307 Temporary Redirect", "Location: /elsewhere"])
        XCTAssertEqual(outcome(signed.transferEnded(status: 307, error: nil, bodyFailure: nil, now: 101, date: date))?.answer?.status, 307,
                       "a request that follows no redirect takes the 3xx as its answer")
    }

    // MARK: failures

    func testTimedOut_isTheDeadlineNearIt_elseTheIdleTimeout() {
        var late = sending()
        XCTAssertEqual(outcome(late.transferEnded(status: nil, error: .timedOut, bodyFailure: nil, now: 129.97, date: date)), .failed(.deadline(seconds: 30)))
        var idle = sending()
        XCTAssertEqual(outcome(idle.transferEnded(status: nil, error: .timedOut, bodyFailure: nil, now: 110, date: date)), .failed(.idleTimeout))
    }

    /// A failure the transport cannot name is an outage only when nothing went out: a body none of
    /// which was taken, and no answer. Without a body nothing tells, so it counts.
    func testUnnamedFailure_isAnOutage_onlyWhenNothingWentOut() {
        let tls = TransferError.unnamed("SSL certificate problem: self-signed certificate")
        var untouched = sending()
        XCTAssertEqual(outcome(untouched.transferEnded(status: nil, error: tls, bodyFailure: nil, now: 101, date: date))?.class, .outage)
        var halfSent = sending()
        halfSent.bodySent(totalBytes: 4)
        XCTAssertEqual(outcome(halfSent.transferEnded(status: nil, error: tls, bodyFailure: nil, now: 101, date: date))?.class, .retryable)
        var answered = sending()
        lines(&answered, ["HTTP/1.1 200 OK", "Content-Length: 9"])
        XCTAssertEqual(outcome(answered.transferEnded(status: 200, error: tls, bodyFailure: nil, now: 101, date: date))?.class, .retryable)
        var bodiless = sending(request(method: "GET", bodyLength: nil))
        XCTAssertEqual(outcome(bodiless.transferEnded(status: nil, error: tls, bodyFailure: nil, now: 101, date: date))?.class, .retryable)
        var named = sending()
        XCTAssertEqual(outcome(named.transferEnded(status: nil, error: .tlsHandshake("bad"), bodyFailure: nil, now: 101, date: date))?.class, .outage)
    }

    /// A server that refuses the client certificate fails every upload alike: a configuration
    /// problem, whatever the transport called the failure (an alert in libcurl's words, or a
    /// connection lost after a handshake that asked for a certificate and never took it).
    func testRefusedClientCertificate_isAConfigurationProblem_byItsAlertOrByTheHandshake() {
        var alerted = sending()
        alerted.bodySent(totalBytes: 10)
        let byAlert = outcome(alerted.transferEnded(
            status: nil, error: .tlsAlert(48, "error:0A000418:SSL routines::tlsv1 alert unknown ca"), bodyFailure: nil, now: 101, date: date))
        XCTAssertEqual(byAlert?.class, .configuration)
        XCTAssertEqual(byAlert?.code, "tls_refused")
        XCTAssertTrue(byAlert?.summary.contains("TLS alert 48 unknown_ca") == true, byAlert?.summary ?? "")

        var dropped = sending()
        dropped.handshakeSeen(TLSHandshakeNote(certificateRequested: true))
        dropped.bodySent(totalBytes: 10)
        let byHandshake = outcome(dropped.transferEnded(status: nil, error: .connectionLost, bodyFailure: nil, now: 101, date: date))
        XCTAssertEqual(byHandshake?.class, .configuration)
        XCTAssertTrue(byHandshake?.summary.contains("it requires one: give one with --cert and --key") == true, byHandshake?.summary ?? "")

        var alertSeen = sending(request(method: "GET", bodyLength: nil))
        alertSeen.handshakeSeen(TLSHandshakeNote(certificateRequested: true, certificateTaken: true, alert: 116, certificatePresented: false))
        let bodiless = outcome(alertSeen.transferEnded(status: nil, error: .unnamed("Recv failure"), bodyFailure: nil, now: 101, date: date))
        XCTAssertEqual(bodiless?.class, .configuration, "the alert the handshake watch read decides, body or not")

        // The server took the certificate (a session ticket): a connection lost later is the network's.
        var taken = sending()
        taken.handshakeSeen(TLSHandshakeNote(certificateRequested: true, certificateTaken: true, certificatePresented: true))
        XCTAssertEqual(outcome(taken.transferEnded(status: nil, error: .connectionLost, bodyFailure: nil, now: 101, date: date)), .failed(.connectionLost))
        // An answer began: the server took the request, whatever came after.
        var answering = sending()
        answering.handshakeSeen(TLSHandshakeNote(certificateRequested: true))
        lines(&answering, ["HTTP/1.1 201 Created", "Content-Length: 9"])
        XCTAssertEqual(outcome(answering.transferEnded(status: 201, error: .connectionLost, bodyFailure: nil, now: 101, date: date)), .failed(.connectionLost))
        // handshake_failure is about the certificate only when the server asked for one.
        var cipher = sending()
        let mismatch = outcome(cipher.transferEnded(status: nil, error: .tlsAlert(40, "handshake failure"), bodyFailure: nil, now: 101, date: date))
        XCTAssertEqual(mismatch, .failed(.tlsHandshake("handshake failure")))
        XCTAssertEqual(mismatch?.class, .outage)
    }

    func testTransportErrors_mapToTheirFailures() {
        let table: [(TransferError, UploadOutcome)] = [
            (.connectionRefused, .failed(.connectionRefused)), (.hostNotFound, .failed(.hostNotFound)), (.noNetwork, .failed(.noNetwork)),
            (.connectionLost, .failed(.connectionLost)), (.streamReset, .failed(.connectionLost)),
            (.badResponse("junk"), .failed(.badResponse("junk"))), (.answerHeadTooLarge, .failed(.answerHeadTooLarge)),
        ]
        for (error, expected) in table {
            var attempt = sending()
            XCTAssertEqual(outcome(attempt.transferEnded(status: nil, error: error, bodyFailure: nil, now: 101, date: date)), expected, "\(error)")
        }
    }

    // MARK: ending from outside

    func testDeadline_stall_cancel_eachEndTheAttemptOnce() {
        var attempt = sending()
        XCTAssertEqual(attempt.deadlineCheck(now: 129.9), .none)
        XCTAssertEqual(outcome(attempt.deadlineCheck(now: 130)), .failed(.deadline(seconds: 30)))
        XCTAssertEqual(attempt.deadlineCheck(now: 131), .none)
        XCTAssertEqual(attempt.transferEnded(status: 201, error: nil, bodyFailure: nil, now: 131, date: date), .none, "a late report is ignored")
        XCTAssertEqual(attempt.cancel(), .none)

        var hashing = HTTPAttempt(request(digest: true), now: 100)
        _ = hashing.start()
        XCTAssertEqual(outcome(hashing.deadlineCheck(now: 200)), .failed(.deadline(seconds: 30)), "hashing counts against the deadline")
        XCTAssertEqual(hashing.bodyPrepared(contentDigest: "x"), .none, "nothing sent after the end")

        var stalled = sending()
        XCTAssertEqual(outcome(stalled.stalled(quietSeconds: 2))?.code, "stalled")
        var cancelled = sending()
        XCTAssertEqual(outcome(cancelled.cancel()), .cancelled)
        var refused = sending()
        XCTAssertEqual(outcome(refused.hopRefused("invalid upload URL 'x'"))?.code, "url_refused")
    }
}
