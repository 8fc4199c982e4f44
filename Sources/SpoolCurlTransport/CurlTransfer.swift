import CCurl
import Glibc
import SpoolCore
import SpoolTransport

/// One attempt of one item on the libcurl transport: its `HTTPAttempt` (the rules), the body it
/// reads (`BodyReader`, the same framing URLSession sends), and the easy handle of the hop on the
/// wire. Touched only by the transfers' thread once submitted (libcurl calls the callbacks there
/// too); before that, by the thread that hashes its body.
final class CurlTransfer: @unchecked Sendable {
    /// Measured once its body is prepared, before the transfer goes to the transfers' thread.
    var request: UploadRequest
    let completion: @Sendable (UploadOutcome) -> Void
    var core: HTTPAttempt
    /// Whether the completion was called (`finish`): exactly once.
    private(set) var finished = false

    // The hop on the wire.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    private(set) var reader: BodyReader?
    /// The attempt asked to stop reading (its answer passed the cut): libcurl reports a write error.
    var stopped = false
    /// The hop's slot in `TLSWatch` (an https hop), until its note is taken.
    private var tlsSlot: Int?

    init(_ request: UploadRequest, core: HTTPAttempt, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        (self.request, self.core, self.completion) = (request, core, completion)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        _ = takeHandshake()
        errorBuffer.deallocate()
        if let headerList { curl_slist_free_all(headerList) }
        request.release()
    }

    /// Starts a hop: its headers, a fresh read of the body from byte 0.
    func begin(_ hop: HTTPAttempt.Hop, rate: BodyRateGate?) {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        for field in hop.headers {
            // libcurl: "Name;" sends a header with an empty value ("Name:" would remove it).
            headerList = curl_slist_append(headerList, field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        // No 1 s wait for a `100 Continue` some servers never send.
        headerList = curl_slist_append(headerList, "Expect:")
        reader = request.requestBody.map { BodyReader($0, rate: rate) }
        stopped = false
        errorBuffer[0] = 0
        _ = takeHandshake()
    }

    /// A slot in `TLSWatch` for this hop's handshake: its number, for CURLOPT_SSL_CTX_DATA.
    func watchHandshake(presenting: Bool) -> Int {
        _ = takeHandshake()
        let slot = TLSWatch.open(presenting: presenting)
        tlsSlot = slot
        return slot
    }

    /// What the hop's handshake showed, if a new connection was made for it; the slot is closed.
    func takeHandshake() -> TLSHandshakeNote? {
        guard let slot = tlsSlot else { return nil }
        tlsSlot = nil
        return TLSWatch.close(slot)
    }

    /// Reports `outcome` once and lets the blob go.
    func finish(_ outcome: UploadOutcome) {
        guard !finished else { return }
        finished = true
        request.release()
        completion(outcome)
    }

    // MARK: libcurl's callbacks (the transfers' thread)

    /// CURLOPT_READFUNCTION: the next bytes of the body.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard let reader else { return 0 }
        let n = reader.read(into: buffer, count: capacity)
        return n < 0 ? Int(CURL_READFUNC_ABORT) : n
    }

    /// CURLOPT_SEEKFUNCTION: libcurl rewinds when it sends the body again on a fresh connection.
    func seek(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, let reader, reader.seek(to: offset) else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        return Int32(CURL_SEEKFUNC_OK)
    }

    /// CURLOPT_WRITEFUNCTION: answer bytes to the attempt; one it cuts ends the transfer (0 makes
    /// libcurl fail it with CURLE_WRITE_ERROR).
    func receive(_ bytes: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        guard core.answerBytes(UnsafeRawBufferPointer(start: bytes, count: count)) == .stopReading else { return count }
        stopped = true
        return 0
    }

    /// CURLOPT_HEADERFUNCTION: one header line to the attempt (read in place: `AnswerHeaderLine`).
    func header(_ bytes: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        let line = bytes.withMemoryRebound(to: UInt8.self, capacity: count) { AnswerHeaderLine(UnsafeBufferPointer(start: $0, count: count)) }
        core.answerHeaderLine(line)
        return count
    }
}
