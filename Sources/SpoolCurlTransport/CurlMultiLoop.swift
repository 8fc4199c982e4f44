import CCurl
import Foundation
import Glibc
import SpoolCore
import SpoolTransport
import Synchronization

/// libcurl's multi interface on one dedicated thread, a driver of `HTTPAttempt`: it puts each hop
/// the attempt asks for on the wire, hands it the answer's head and bytes, and reports how the
/// transfer ended; the attempt decides the rest. `curl_multi_poll` sleeps until a socket, a
/// libcurl timer or `curl_multi_wakeup` (a new request, cancelAll, stop) needs it. Every easy
/// handle and every callback lives on that thread; other threads only post to `inbox`.
final class CurlMultiLoop: @unchecked Sendable {
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

    let idleSeconds: Double
    let options: CurlOptions
    /// `--limit-rate`: every body read of the daemon shares it (`BodyReader`).
    let rate: BodyRateGate?
    private let inbox = Mutex(Inbox())
    private let multi: UnsafeMutableRawPointer
    /// Transfers on the wire, by easy handle; the loop's thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    init(idleSeconds: Double, connections: Int, options: CurlOptions, rate: BodyRateGate?) {
        _ = CurlMultiLoop.globalInit
        (self.idleSeconds, self.options, self.rate) = (idleSeconds, options, rate)
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
        if !accepted { transfer.finish(.cancelled) }
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
                for easy in Array(active.keys) { end(easy) }
            }
            if work.stopping {
                for transfer in work.starts[cut...] { transfer.finish(.cancelled) }
                break
            }
            for transfer in work.starts[cut...] { begin(transfer) }
            for transfer in work.cancels {
                if let easy = transfer.easy, active[easy] === transfer { end(easy) }
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            collect()
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        inbox.withLock { $0.finished = true }
        curl_multi_cleanup(multi)
        stopped.signal()
    }

    /// Puts the hop the attempt asked for on the wire, or ends the attempt at once.
    private func begin(_ transfer: CurlTransfer) {
        guard let hop = transfer.core.hop, !transfer.finished else { return }
        let now = Now.seconds
        let remaining = transfer.core.remainingSeconds(now: now)
        guard remaining > 0 else { return perform(transfer, transfer.core.deadlineCheck(now: now)) }
        guard let easy = curl_easy_init() else {
            return perform(transfer, transfer.core.transferEnded(
                status: nil, error: .unnamed("curl_easy_init failed (out of memory)"), bodyFailure: nil, now: now, date: Now.date))
        }
        transfer.begin(hop, rate: rate)
        transfer.easy = easy
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = hop.url.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_URL, $0) }
        _ = "http,https".withCString { spoold_curl_setopt_ptr(easy, CURLOPT_PROTOCOLS_STR, $0) }
        spoold_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        spoold_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        spoold_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        let length = request.requestBody?.length
        if request.method == "HEAD" {
            // An answer without a body, whatever its Content-Length says.
            spoold_curl_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if length == nil {
            _ = request.method.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CUSTOMREQUEST, $0) }
        } else if request.method == "POST" {
            spoold_curl_setopt_long(easy, CURLOPT_POST, 1)
            spoold_curl_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(length ?? 0))
        } else {
            spoold_curl_setopt_long(easy, CURLOPT_UPLOAD, 1)
            _ = request.method.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CUSTOMREQUEST, $0) }
            spoold_curl_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(length ?? 0))
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
            if hop.url.lowercased().hasPrefix("https:") { spoold_curl_setopt_long(easy, CURLOPT_PIPEWAIT, 1) }
        } else {
            spoold_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
        if let file = options.caFile { _ = file.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CAINFO, $0) } }
        if let path = options.caPath { _ = path.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_CAPATH, $0) } }
        if let file = options.clientCertificate { _ = file.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_SSLCERT, $0) } }
        if let file = options.clientKey { _ = file.withCString { spoold_curl_setopt_ptr(easy, CURLOPT_SSLKEY, $0) } }
        if hop.url.lowercased().hasPrefix("https:") {
            // A server that refuses the client certificate shows it in the handshake (`TLSWatch`).
            let slot = transfer.watchHandshake(presenting: options.clientCertificate != nil)
            spoold_curl_setopt_ssl_ctx(easy, TLSWatch.contextCallback)
            spoold_curl_setopt_ptr(easy, CURLOPT_SSL_CTX_DATA, UnsafeRawPointer(bitPattern: slot))
        }
        // A handle the multi refused would never finish: the attempt ends here instead.
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            curl_easy_cleanup(easy)
            transfer.easy = nil
            return perform(transfer, transfer.core.transferEnded(
                status: nil, error: .unnamed("libcurl refused the transfer: \(String(cString: curl_multi_strerror(added)))"),
                bodyFailure: nil, now: now, date: Now.date))
        }
        active[easy] = transfer
    }

    /// Does what the attempt says: the next hop, or its end.
    private func perform(_ transfer: CurlTransfer, _ action: HTTPAttempt.Action) {
        switch action {
        case .send: begin(transfer)
        case .finish(let outcome): transfer.finish(outcome)
        case .none, .stopReading, .prepareBody: break
        }
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

    /// A transfer ended: its status and libcurl's result go to the attempt.
    private func finished(_ easy: UnsafeMutableRawPointer, _ code: CURLcode) {
        guard let transfer = active[easy] else { return }
        var status = 0
        spoold_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let detail = String(cString: transfer.errorBuffer)
        detach(easy)
        let error: TransferError? = switch code {
        case CURLE_OK: nil
        case CURLE_WRITE_ERROR where transfer.stopped: .stoppedOnRequest
        default: TransferError(curl: code, detail: detail)
        }
        transfer.core.bodySent(totalBytes: transfer.reader?.bytesRead ?? 0)
        if let handshake = transfer.takeHandshake() { transfer.core.handshakeSeen(handshake) }
        perform(transfer, transfer.core.transferEnded(
            status: status, error: error, bodyFailure: transfer.request.body.failure, now: Now.seconds, date: Now.date))
    }

    /// Takes a transfer off the wire (cancelled or stopped): the attempt ends cancelled.
    private func end(_ easy: UnsafeMutableRawPointer) {
        guard let transfer = active[easy] else { return }
        detach(easy)
        perform(transfer, transfer.core.cancel())
    }

    private func detach(_ easy: UnsafeMutableRawPointer) {
        curl_multi_remove_handle(multi, easy)
        curl_easy_cleanup(easy)
        active[easy]?.easy = nil
        active[easy] = nil
    }
}
