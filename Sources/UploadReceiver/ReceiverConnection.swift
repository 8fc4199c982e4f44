#if canImport(Glibc)
import Glibc
#endif

/// Serves one accepted connection on its own thread: reads requests one after another
/// (keep-alive), asks the script what to do with each, reads the body, and answers or applies
/// the scripted fault.
///
/// Per request: parse the head → log it (index assigned) → call the script once with the
/// head-only record → `closeBeforeBody` closes here → send `100 Continue` if expected → read the
/// body (`closeMidBody` stops halfway and closes; `resetAfter`/`finAfter` stop at their byte and
/// reset or half-close) → store it if 2xx and a store directory is set → `neverAnswer` holds the
/// connection → `endlessAnswer`/`tricklingAnswer`/`largeAnswer` stream their answer → otherwise send the response.
final class ReceiverConnection {
    /// Longest chunk-size line accepted in a chunked body.
    static let maximumChunkLineBytes = 4096

    private let core: ReceiverCore
    private let stream: SocketStream
    private let index: Int

    init(core: ReceiverCore, fd: Int32, index: Int) {
        self.core = core
        self.stream = SocketStream(fd: fd)
        self.index = index
    }

    /// Serves requests until the connection closes; the caller closes the socket.
    func run() {
        while serveOneRequest() {}
    }

    private enum BodyOutcome {
        case complete
        /// The peer closed (or the receiver stopped) before the body ended.
        case ended
        /// The chunked framing was broken.
        case malformed
        /// `closeMidBody` read its half.
        case stoppedHalfway
    }

    /// Returns whether the connection stays open for another request.
    private func serveOneRequest() -> Bool {
        let headBytes: [UInt8]
        switch stream.readHead(limit: ReceiverCore.maximumHeadBytes) {
        case .closed:
            return false
        case .tooLong:
            refuse(status: 431, reason: "request head larger than 64 KiB")
            return false
        case .bytes(let bytes):
            headBytes = bytes
        }
        let head: RequestHead
        let framing: RequestHead.BodyFraming
        do {
            head = try RequestHead(parsing: headBytes)
            framing = try head.bodyFraming()
        } catch {
            refuse(status: error.status, reason: error.reason)
            return false
        }

        var (record, script) = core.beginRequest(head, connectionIndex: index)
        let response = script.response(for: record)
        if response.fault == .closeBeforeBody {
            core.markHandled(record)
            return false
        }
        if head.expectsContinue, !stream.send(ResponseEncoder.continueResponse) {
            core.markHandled(record)
            return false
        }

        switch response.fault {
        case .resetAfter(let limit), .finAfter(let limit):
            let sink = BodySink(keepsInMemory: core.keepsBodiesInMemory, storePath: nil)
            _ = readBodyPrefix(framing, limit: limit, into: sink)
            record.body = sink.kept
            record.bodyLength = sink.length
            record.bodyComplete = false
            core.update(record)
            if case .resetAfter = response.fault {
                stream.resetOnClose()
            } else {
                stream.finish()
                stream.discardUntilClosed()
            }
            core.markHandled(record)
            return false
        case .answerThenReset(let limit):
            let sink = BodySink(keepsInMemory: core.keepsBodiesInMemory, storePath: nil)
            _ = readBodyPrefix(framing, limit: limit, into: sink)
            record.body = sink.kept
            record.bodyLength = sink.length
            record.bodyComplete = false
            record.answeredStatus = response.status
            core.update(record)
            var answer = response
            answer.fault = .none
            _ = stream.send(ResponseEncoder.encode(answer, forHEAD: head.method == "HEAD", closing: false))
            usleep(100_000)
            stream.resetOnClose()
            core.markHandled(record)
            return false
        default:
            break
        }

        let storesBody = response.fault == .none && (200..<300).contains(response.status)
        let sink = BodySink(
            keepsInMemory: core.keepsBodiesInMemory, storePath: storesBody ? core.storePath(for: record) : nil, inflating: head.isGzip)
        let outcome = readBody(framing, into: sink, stopHalfway: response.fault == .closeMidBody)
        record.body = sink.kept
        record.bodyLength = sink.length
        record.inflatedLength = head.isGzip ? sink.contentLength : nil
        record.bodyComplete = outcome == .complete
        switch outcome {
        case .complete:
            break
        case .ended, .stoppedHalfway:
            _ = sink.finish(complete: false)
            core.markHandled(record)
            return false
        case .malformed:
            _ = sink.finish(complete: false)
            record.answeredStatus = 400
            let sent = stream.send(ResponseEncoder.refusal(status: 400, reason: "malformed chunked body"))
            core.markHandled(record)
            if sent { stream.lingeringShutdown(seconds: 1) }
            return false
        }

        if let failure = sink.decodeFailure {
            _ = sink.finish(complete: false)
            record.answeredStatus = 400
            core.update(record)
            let sent = stream.send(ResponseEncoder.refusal(status: 400, reason: failure))
            core.markHandled(record)
            if sent { stream.lingeringShutdown(seconds: 1) }
            return false
        }

        var answer = response
        record.storedPath = sink.finish(complete: true)
        if let failure = sink.storeFailure {
            answer = .status(507, body: failure + "\n", headers: [("Content-Type", "text/plain")])
        }
        if response.fault == .neverAnswer {
            core.markHandled(record)
            stream.discardUntilClosed()
            return false
        }
        if response.streamsAnswer {
            record.answeredStatus = answer.status
            core.update(record)
            sendStreamedAnswer(response)
            core.markHandled(record)
            return false
        }

        let closing = !head.keepsAlive || ResponseEncoder.asksToClose(answer) || core.isStopping
        record.answeredStatus = answer.status
        core.update(record)  // the client may look at the log as soon as it has the response
        let sent = stream.send(ResponseEncoder.encode(answer, forHEAD: head.method == "HEAD", closing: closing))
        core.markHandled(record)
        if closing, sent { stream.lingeringShutdown(seconds: 1) }
        return sent && !closing
    }

    /// Sends a streamed answer (`endlessAnswer`, `largeAnswer`) until it ends, the client goes
    /// or the receiver stops; the body is one 64 KiB pattern sent again and again.
    private func sendStreamedAnswer(_ response: ScriptedResponse) {
        let block = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
        if case .largeAnswer(let total) = response.fault {
            guard stream.send(ResponseEncoder.streamedHead(response, length: total)) else { return }
            var remaining = total
            while remaining > 0, !core.isStopping {
                let n = Int(min(remaining, Int64(block.count)))
                guard stream.send(n == block.count ? block : Array(block[0..<n])) else { return }
                remaining -= Int64(n)
            }
            return
        }
        guard stream.send(ResponseEncoder.streamedHead(response, length: nil)) else { return }
        if response.fault == .tricklingAnswer {
            while !core.isStopping, stream.send(Array("1\r\nx\r\n".utf8)) { usleep(50_000) }
            return
        }
        let chunk = Array("\(String(block.count, radix: 16))\r\n".utf8) + block + Array("\r\n".utf8)
        while !core.isStopping, stream.send(chunk) {}
    }

    /// Reads at most `limit` bytes of the body (fewer if it is shorter); false if the client went
    /// away or the framing broke first.
    private func readBodyPrefix(_ framing: RequestHead.BodyFraming, limit: Int64, into sink: BodySink) -> Bool {
        switch framing {
        case .none:
            return true
        case .length(let length):
            return stream.readExactly(min(limit, length), sink.append)
        case .chunked:
            var remaining = limit
            while remaining > 0 {
                guard case .bytes(let line) = stream.readLine(limit: ReceiverConnection.maximumChunkLineBytes),
                      let size = ReceiverConnection.chunkSize(line)
                else { return false }
                if size == 0 { return true }
                guard stream.readExactly(min(size, remaining), sink.append) else { return false }
                if size > remaining { return true }
                remaining -= size
                guard case .bytes(let end) = stream.readLine(limit: 2), end.isEmpty else { return false }
            }
            return true
        }
    }

    private func readBody(_ framing: RequestHead.BodyFraming, into sink: BodySink, stopHalfway: Bool) -> BodyOutcome {
        switch framing {
        case .none:
            return stopHalfway ? .stoppedHalfway : .complete
        case .length(let length):
            if stopHalfway { return stream.readExactly(length / 2, sink.append) ? .stoppedHalfway : .ended }
            return stream.readExactly(length, sink.append) ? .complete : .ended
        case .chunked:
            return readChunkedBody(into: sink, stopHalfway: stopHalfway)
        }
    }

    /// Decodes `Transfer-Encoding: chunked`; chunk extensions and trailers are ignored.
    private func readChunkedBody(into sink: BodySink, stopHalfway: Bool) -> BodyOutcome {
        while true {
            let sizeLine: [UInt8]
            switch stream.readLine(limit: ReceiverConnection.maximumChunkLineBytes) {
            case .closed: return .ended
            case .tooLong: return .malformed
            case .bytes(let line): sizeLine = line
            }
            guard let size = ReceiverConnection.chunkSize(sizeLine) else { return .malformed }
            if size == 0 { return readTrailers() }
            if stopHalfway { return stream.readExactly(size / 2, sink.append) ? .stoppedHalfway : .ended }
            guard stream.readExactly(size, sink.append) else { return .ended }
            switch stream.readLine(limit: 2) {
            case .closed: return .ended
            case .tooLong: return .malformed
            case .bytes(let line): if !line.isEmpty { return .malformed }
            }
        }
    }

    /// Skips trailer fields up to the blank line that ends a chunked body.
    private func readTrailers() -> BodyOutcome {
        var total = 0
        while true {
            switch stream.readLine(limit: ReceiverCore.maximumHeadBytes) {
            case .closed: return .ended
            case .tooLong: return .malformed
            case .bytes(let line):
                if line.isEmpty { return .complete }
                total += line.count
                if total > ReceiverCore.maximumHeadBytes { return .malformed }
            }
        }
    }

    /// The hexadecimal size at the start of a chunk-size line (before any `;extension`).
    static func chunkSize(_ line: [UInt8]) -> Int64? {
        let digits = line.prefix { $0 != UInt8(ascii: ";") }.filter { $0 != 0x20 && $0 != 0x09 }
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        var size: Int64 = 0
        for digit in digits {
            guard let value = StoredFileName.hexValue(digit) else { return nil }
            size = size << 4 | Int64(value)
        }
        return size
    }

    /// Answers a request the receiver cannot serve, then closes.
    private func refuse(status: Int, reason: String) {
        if stream.send(ResponseEncoder.refusal(status: status, reason: reason)) {
            stream.lingeringShutdown(seconds: 1)
        }
    }
}
