import CCurl
import Dispatch
import Foundation
import Glibc
import SpoolCore
import SpoolTransport

/// One attempt of one item on the libcurl transport, across its redirect hops.
///
/// The body is streamed from the descriptor the spool opened for the attempt (`pread`, so a redirect or a
/// rewind re-sends from any offset): the multipart framing, if any, around the blob. Only the
/// first `keep` bytes of an answer are kept, however long it runs. Touched only by the
/// transport's thread once submitted (libcurl calls the callbacks there too).
final class CurlTransfer: @unchecked Sendable {
    let request: UploadRequest
    let completion: @Sendable (UploadOutcome) -> Void
    /// Uptime at which the attempt ends, all hops included (`--timeout`).
    let deadline: DispatchTime
    /// The multipart preamble and epilogue around the blob (empty without `--form`), or an S3
    /// step's own bytes (then no blob).
    let prefix: [UInt8]
    let suffix: [UInt8]
    /// The bytes of the blob sent between them: all of it, one part's range, or none.
    let blobOffset: Int64
    let blobLength: Int64
    let contentType: String
    var contentDigest: String?
    var url: String
    var hops = 0

    // One hop's state.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    var position: Int64 = 0
    /// Why the body could not be read (the blob shrank or a read failed): the attempt's error.
    var readFailure: String?
    let keep: Int
    var answer: [UInt8] = []
    var answerBytes = 0
    var retryAfter: String?
    var location: String?
    var etag: String?
    var contentLength: Int64?
    /// The answer ran past `CurlMultiLoop.answerCutBytes` (an S3 step's): its status is the outcome.
    var answerCut = false

    var bodyLength: Int64 { Int64(prefix.count) + blobLength + Int64(suffix.count) }

    init(_ request: UploadRequest, deadline: DispatchTime, keep: Int,
         completion: @escaping @Sendable (UploadOutcome) -> Void) {
        self.request = request
        self.deadline = deadline
        self.keep = keep
        self.completion = completion
        url = request.url
        switch request.payload {
        case .blob:
            (prefix, suffix) = (request.form?.preamble ?? [], request.form?.epilogue ?? [])
            (blobOffset, blobLength) = (0, request.size)
        case .range(let offset, let length):
            (prefix, suffix, blobOffset, blobLength) = ([], [], offset, length)
        case .bytes(let bytes):
            (prefix, suffix, blobOffset, blobLength) = (bytes, [], 0, 0)
        case .none:
            (prefix, suffix, blobOffset, blobLength) = ([], [], 0, 0)
        }
        contentType = request.form?.headerValue ?? request.contentType
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        errorBuffer.deallocate()
        if let headerList { curl_slist_free_all(headerList) }
        request.release()
    }

    /// Starts a hop over: the body from its first byte, a fresh answer.
    func resetForHop() {
        position = 0
        readFailure = nil
        answer = []
        answerBytes = 0
        retryAfter = nil
        location = nil
        etag = nil
        contentLength = nil
        answerCut = false
        errorBuffer[0] = 0
    }

    /// CURLOPT_READFUNCTION: the next bytes of framing + blob + framing.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        var written = 0
        let blobStart = Int64(prefix.count)
        let blobEnd = blobStart + blobLength
        while written < capacity, position < bodyLength {
            let room = capacity - written
            if position < blobStart {
                let n = min(room, Int(blobStart - position))
                copy(prefix, from: Int(position), count: n, to: buffer + written)
                written += n
                position += Int64(n)
            } else if position < blobEnd {
                let n = request.body.read(
                    into: UnsafeMutableRawPointer(buffer + written), count: min(room, Int(blobEnd - position)),
                    at: blobOffset + position - blobStart)
                guard n > 0 else {
                    readFailure = request.body.failure ?? "the blob shrank while it was sent (spooled as \(request.size) B)"
                    return Int(CURL_READFUNC_ABORT)
                }
                written += n
                position += Int64(n)
            } else {
                let n = min(room, Int(bodyLength - position))
                copy(suffix, from: Int(position - blobEnd), count: n, to: buffer + written)
                written += n
                position += Int64(n)
            }
        }
        return written
    }

    private func copy(_ bytes: [UInt8], from offset: Int, count: Int, to buffer: UnsafeMutablePointer<CChar>) {
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
    }

    /// CURLOPT_SEEKFUNCTION: libcurl rewinds when it re-sends on a fresh connection.
    func seek(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0, offset <= bodyLength else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        position = offset
        return Int32(CURL_SEEKFUNC_OK)
    }

    /// CURLOPT_WRITEFUNCTION: keeps the first `keep` bytes and counts the rest (which the
    /// deadline bounds), so an endless answer costs no memory.
    func receive(_ bytes: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        let take = min(count, keep - answer.count)
        if take > 0 {
            bytes.withMemoryRebound(to: UInt8.self, capacity: take) { answer.append(contentsOf: UnsafeBufferPointer(start: $0, count: take)) }
        }
        answerBytes += count
        if request.answerKeep > 0, answerBytes > CurlMultiLoop.answerCutBytes {
            answerCut = true
            return 0  // libcurl ends the transfer (CURLE_WRITE_ERROR)
        }
        return count
    }

    /// CURLOPT_HEADERFUNCTION: one header line; a status line starts a new response (100 Continue).
    func header(_ bytes: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        let line = bytes.withMemoryRebound(to: UInt8.self, capacity: count) {
            AnswerHeaderLine(UnsafeBufferPointer(start: $0, count: count))
        }
        switch line {
        case .statusLine:
            retryAfter = nil
            location = nil
            etag = nil
            contentLength = nil
        case .retryAfter(let value): retryAfter = value
        case .location(let value): location = value
        case .etag(let value): etag = value
        case .contentLength(let value): contentLength = Int64(value)
        case .other: break
        }
        return count
    }
}
