import CCurl
import Foundation
import Glibc
import SpoolCore
import SpoolTransport
import Synchronization

/// libcurl's multi interface on one dedicated thread: `curl_multi_poll` sleeps until a socket,
/// a libcurl timer or `curl_multi_wakeup` (a new request, cancelAll, stop) needs it. Every easy
/// handle and every callback lives on that thread; other threads only post to `inbox`.
final class CurlMultiLoop: @unchecked Sendable {
    /// Bytes of an answer kept for the attempt history (as `URLSessionTransport`).
    static let excerptLength = 512
    /// Answer bytes an S3 step reads before its status alone is the outcome (as `URLSessionTransport`).
    static let answerCutBytes = 1 << 20

    private struct Inbox {
        var starts: [CurlTransfer] = []
        /// Single requests to cancel (`UploadRequest.cancellation`), after `starts` are begun.
        var cancels: [CurlTransfer] = []
        /// `starts.count` when cancelAll was asked: those started before it are cancelled too.
        var cancelUpTo: Int?
        var stopping = false
        /// The thread has left its loop and cleans up (or has cleaned up) the multi handle: no
        /// wake-up may reach it any more, and nothing in the inbox would be read.
        var finished = false
    }

    let deadlineSeconds: Double
    let idleSeconds: Double
    let redirects: RedirectPolicy
    let keep: Int
    let answerLimit: Int
    let options: CurlOptions
    /// `--limit-rate`: the bytes per second in force for the whole daemon.
    let limitRate: SendRate?
    /// The share of it last set on each transfer on the wire (nil: no limit); the loop's thread only.
    private var sharedRate: Int64?
    private let inbox = Mutex(Inbox())
    private let multi: UnsafeMutableRawPointer
    /// Transfers on the wire, by easy handle; the loop's thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    init(deadlineSeconds: Double, idleSeconds: Double, redirects: RedirectPolicy, keep: Int, answerLimit: Int,
         connections: Int, options: CurlOptions, limitRate: SendRate? = nil) {
        _ = CurlMultiLoop.globalInit
        (self.deadlineSeconds, self.idleSeconds, self.redirects) = (deadlineSeconds, idleSeconds, redirects)
        (self.keep, self.answerLimit, self.options, self.limitRate) = (keep, answerLimit, options, limitRate)
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed (out of memory)") }
        self.multi = multi
        // libcurl's default cache holds 4 idle connections per transfer added *at that moment*: when
        // the engine's group commit briefly leaves few transfers on the wire, it closed connections
        // that the next uploads then opened again (59 TLS handshakes for 1,000 items at 16 at once).
        spoold_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, connections))
        spoold_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, options.http2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING)
        let thread = Thread { [self] in run() }
        thread.name = "spoold.curl"
        thread.start()
    }

    /// Wakes the thread only when the inbox was empty: otherwise whoever filled it has woken the
    /// thread (or is about to), and the thread takes the whole inbox at once. The engine starts
    /// several uploads per round; a wake-up each cost a `sendto` here and a loop turn there.
    /// Queues a transfer for the thread; after `stop`, it completes at once as cancelled.
    func submit(_ transfer: CurlTransfer) {
        let accepted = inbox.withLock { box in
            guard !box.stopping else { return false }
            // A non-empty inbox already has its wake-up on the way.
            if box.starts.isEmpty && box.cancels.isEmpty && box.cancelUpTo == nil { wake(box) }
            box.starts.append(transfer)
            return true
        }
        if !accepted { transfer.completion(.cancelled) }
    }

    func cancel(_ transfer: CurlTransfer) {
        inbox.withLock { box in
            box.cancels.append(transfer)
            wake(box)
        }
    }

    func cancelAll() {
        inbox.withLock { box in
            box.cancelUpTo = box.starts.count
            wake(box)
        }
    }

    /// `curl_multi_wakeup`, under the inbox's lock, unless the thread has finished: the multi
    /// handle is freed then (a second `stop`, a cancel after `shutdown`, reached freed memory).
    private func wake(_ box: Inbox) {
        if !box.finished { curl_multi_wakeup(multi) }
    }

    /// Signalled once the thread has closed every connection (`curl_multi_cleanup`).
    private let stopped = DispatchSemaphore(value: 0)

    /// Ends the thread: what is in flight completes as cancelled.
    func stop() {
        inbox.withLock { box in
            box.stopping = true
            wake(box)
        }
    }

    /// Ends the thread and waits (at most `seconds`) until its connections are closed. Called
    /// before the process exits: libcrypto's exit handler frees OpenSSL's state, and a TLS
    /// connection closed by this thread at the same moment was seen to abort with a double free.
    func stopAndWait(seconds: Double) {
        stop()
        // Signalled again for the next caller: a second shutdown (or the deinit's) returns at once.
        if stopped.wait(timeout: .now() + seconds) == .success { stopped.signal() }
    }

    private func run() {
        while true {
            let work = inbox.withLock { box in
                defer { box = Inbox(stopping: box.stopping) }
                return box
            }
            let cut = work.stopping ? 0 : (work.cancelUpTo ?? 0)
            for transfer in work.starts[..<cut] { begin(transfer) }
            if work.cancelUpTo != nil || work.stopping {
                for easy in Array(active.keys) { end(easy, .cancelled) }
            }
            if work.stopping {
                for transfer in work.starts[cut...] { transfer.completion(.cancelled) }
                break
            }
            for transfer in work.starts[cut...] { begin(transfer) }
            for transfer in work.cancels {
                if let easy = transfer.easy, active[easy] === transfer { end(easy, .cancelled) }
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            collect()
            curl_multi_poll(multi, nil, 0, 1000, nil)
            // A --limit-rate timetable changes the rate at its times: within a second here.
            if limitRate != nil, !active.isEmpty, shareOfRate() != sharedRate { shareRate() }
        }
        inbox.withLock { $0.finished = true }
        curl_multi_cleanup(multi)
        stopped.signal()
    }

    /// Configures one hop of `transfer` and puts it on the wire, or ends it at once.
    private func begin(_ transfer: CurlTransfer) {
        let remaining = Double(Int64(transfer.deadline.uptimeNanoseconds) - Int64(DispatchTime.now().uptimeNanoseconds)) / 1e9
        guard remaining > 0 else {
            transfer.completion(timeoutOutcome)
            return
        }
        // libcurl sends a field as it is given: a line break in it would start another field,
        // or another request.
        if transfer.hops == 0, let problem = transfer.request.headerProblem {
            transfer.completion(UploadRequest.refusedHeaders(problem))
            return
        }
        guard let easy = curl_easy_init() else {
            transfer.completion(.failed(.unidentified("curl_easy_init failed (out of memory)", beforeSending: true)))
            return
        }
        transfer.resetForHop()
        transfer.easy = easy
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = transfer.url.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_URL, $0) }
        _ = "http,https".withCString { spoold_curl_setopt_ptr(easy, CURLOPT_PROTOCOLS_STR, $0) }
        spoold_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        spoold_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        spoold_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        if request.method == "HEAD" {
            // An answer without a body, whatever its Content-Length says.
            spoold_curl_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if case .none = request.payload {
            _ = request.method.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CUSTOMREQUEST, $0) }
        } else if request.method == "POST" {
            spoold_curl_setopt_long(easy, CURLOPT_POST, 1)
            spoold_curl_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(transfer.bodyLength))
        } else {
            spoold_curl_setopt_long(easy, CURLOPT_UPLOAD, 1)
            _ = request.method.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CUSTOMREQUEST, $0) }
            spoold_curl_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(transfer.bodyLength))
        }
        spoold_curl_setopt_read(easy, { buffer, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().read(into: buffer!, capacity: size * count)
        })
        spoold_curl_setopt_ptr(easy, CURLOPT_READDATA, context)
        spoold_curl_setopt_seek(easy, { context, offset, origin in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().seek(to: Int64(offset), origin: origin)
        })
        spoold_curl_setopt_ptr(easy, CURLOPT_SEEKDATA, context)
        spoold_curl_setopt_write(easy, { bytes, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().receive(bytes!, count: size * count)
        })
        spoold_curl_setopt_ptr(easy, CURLOPT_WRITEDATA, context)
        spoold_curl_setopt_header(easy, { bytes, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().header(bytes!, count: size * count)
        })
        spoold_curl_setopt_ptr(easy, CURLOPT_HEADERDATA, context)
        if transfer.headerList == nil { transfer.headerList = headerList(for: transfer) }
        spoold_curl_setopt_ptr(easy, CURLOPT_HTTPHEADER, transfer.headerList)
        // The deadline spans every hop: this hop gets what is left of it.
        spoold_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, Int(remaining * 1000)))
        spoold_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(idleSeconds * 1000)))
        // Idle: under one byte a second, either way, for --idle-timeout (whole seconds, rounded up).
        spoold_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
        spoold_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(idleSeconds.rounded(.up))))
        if options.http2 {
            spoold_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            // Over HTTPS, wait for the connection being made to learn whether it multiplexes rather
            // than open one more (without: one connection per upload at once, and no gain).
            // Plain HTTP is HTTP/1.1 either way.
            if transfer.url.lowercased().hasPrefix("https:") { spoold_curl_setopt_long(easy, CURLOPT_PIPEWAIT, 1) }
        } else {
            spoold_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
        if let file = options.caFile { _ = file.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CAINFO, $0) } }
        if let path = options.caPath { _ = path.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CAPATH, $0) } }
        // A handle the multi refused would never finish: the attempt ends here instead.
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            curl_easy_cleanup(easy)
            transfer.easy = nil
            transfer.completion(.failed(.unidentified("libcurl refused the transfer: \(String(cString: curl_multi_strerror(added)))", beforeSending: true)))
            return
        }
        active[easy] = transfer
        shareRate()
    }

    /// The request's headers, then ours: `Content-Type`, `Idempotency-Key`, `Content-Digest`
    /// (`begin` refused the request before this if one breaks `HeaderRule`).
    /// A `User-Agent` of the request's wins over spoold's; `Expect:` is turned off (no 1 s wait
    /// for a `100 Continue` some servers never send).
    private func headerList(for transfer: CurlTransfer) -> UnsafeMutablePointer<curl_slist>? {
        var lines: [(String, String)] = [("User-Agent", SpooldVersion.userAgent)]
        func set(_ name: String, _ value: String) {
            lines.removeAll { $0.0.lowercased() == name.lowercased() }
            lines.append((name, value))
        }
        for (name, value) in transfer.request.headers.sorted(by: { $0.key < $1.key }) { set(name, value) }
        set("Content-Type", transfer.contentType)
        set("Idempotency-Key", transfer.request.id.rawValue)
        if let digest = transfer.contentDigest { set(ContentDigest.headerName, digest) }
        set("Expect", "")
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in lines {
            // libcurl: "Name:" removes a header, "Name;" sends it empty.
            let line = value.isEmpty ? (name == "Expect" ? "Expect:" : "\(name);") : "\(name): \(value)"
            list = curl_slist_append(list, line)
        }
        return list
    }

    /// `--limit-rate` for the whole daemon: an equal share of the rate in force for each transfer
    /// on the wire, set again whenever one starts or ends and when the rate changes (an
    /// approximation: a share a slow transfer leaves unused is not given to the others). 0 is
    /// libcurl's "no limit".
    private func shareRate() {
        guard limitRate != nil, !active.isEmpty else { return }
        sharedRate = shareOfRate()
        for easy in active.keys { spoold_curl_setopt_off_t(easy, CURLOPT_MAX_SEND_SPEED_LARGE, curl_off_t(sharedRate ?? 0)) }
    }

    /// Each transfer's share of the rate in force now (nil: no limit).
    private func shareOfRate() -> Int64? {
        limitRate?.bytesPerSecond().map { max(1, $0 / Int64(max(1, active.count))) }
    }

    /// Reads libcurl's finished transfers and decides each: an answer, a redirect hop, an error.
    private func collect() {
        var left: Int32 = 0
        var done: [(UnsafeMutableRawPointer, CURLcode)] = []
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            done.append((easy, message.pointee.data.result))
        }
        for (easy, code) in done { finished(easy, code) }
    }

    private func finished(_ easy: UnsafeMutableRawPointer, _ code: CURLcode) {
        guard let transfer = active[easy] else { return }
        var status = 0
        spoold_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let detail = String(cString: transfer.errorBuffer)
        var declaredLength: curl_off_t = -1
        spoold_curl_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declaredLength)
        detach(easy)
        // A server may answer before it has read the whole body, then end the stream (HTTP/2
        // RST_STREAM, RFC 9113 section 8.1): libcurl 7.88 reports a stream error although the
        // answer arrived whole (its status, and as many bytes as its Content-Length says). That
        // answer is the outcome, as libcurl makes it over HTTP/1.1; a partial one is not.
        let answeredBeforeTheBodyWasRead = code == CURLE_HTTP2_STREAM && status >= 200
            && declaredLength >= 0 && Int64(declaredLength) == Int64(transfer.answerBytes)
        // An S3 step's answer cut at `answerCutBytes`: its status arrived and is the outcome.
        guard code == CURLE_OK || (transfer.answerCut && status > 0) || answeredBeforeTheBodyWasRead else {
            if let failure = transfer.readFailure {
                transfer.completion(.failed(.unidentified(failure, beforeSending: false)))
            } else if code == CURLE_OPERATION_TIMEDOUT, DispatchTime.now() >= transfer.deadline - .milliseconds(50) {
                transfer.completion(timeoutOutcome)
            } else {
                transfer.completion(CurlErrorMapping.outcome(code, detail: detail))
            }
            return
        }
        let excerpt = CurlMultiLoop.excerpt(transfer.answer)
        let location = transfer.location.flatMap { URL(string: $0, relativeTo: URL(string: transfer.url))?.absoluteURL.absoluteString }
        let decision = transfer.request.followsRedirects
            ? redirects.decide(
                status: status, method: transfer.request.method, from: transfer.url, location: location, hopsSoFar: transfer.hops)
            : .notARedirect
        switch decision {
        case .follow(let target):
            transfer.url = target
            transfer.hops += 1
            begin(transfer)
            return
        case .refuse(let reason):
            transfer.completion(.refusal(.redirectRefused, reason, status: status, excerpt: excerpt))
            return
        case .notARedirect:
            break
        }
        var answer = HTTPAnswer(status: status, excerpt: excerpt)
        answer.etag = transfer.etag
        answer.contentLength = transfer.contentLength
        let kept = max(answerLimit, transfer.request.answerKeep)
        if kept > 0 {
            answer.body = Array(transfer.answer.prefix(kept))
            answer.bodyTruncated = transfer.answerBytes > kept
        }
        if let value = transfer.retryAfter { answer.retryAfterSeconds = RetryAfter.seconds(from: value, now: Date()) }
        transfer.completion(.answered(answer))
    }

    /// Takes a transfer off the wire (cancelled or stopped) and reports `outcome`.
    private func end(_ easy: UnsafeMutableRawPointer, _ outcome: UploadOutcome) {
        guard let transfer = active[easy] else { return }
        detach(easy)
        transfer.completion(outcome)
    }

    private func detach(_ easy: UnsafeMutableRawPointer) {
        curl_multi_remove_handle(multi, easy)
        curl_easy_cleanup(easy)
        active[easy]?.easy = nil
        active[easy] = nil
        shareRate()
    }

    private var timeoutOutcome: UploadOutcome {
        .failed(.deadline(seconds: deadlineSeconds))
    }

    /// The first bytes of an answer as one printable line.
    static func excerpt(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty else { return nil }
        let text = String(decoding: bytes.prefix(excerptLength), as: UTF8.self)
        let cleaned = String(text.unicodeScalars.map { $0.value < 32 || $0.value == 127 ? " " : Character($0) })
        return cleaned.trimmingCharacters(in: .whitespaces)
    }
}
