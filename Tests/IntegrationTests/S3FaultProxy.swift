import Foundation
import Glibc
import XCTest

/// A relay on 127.0.0.1 in front of an S3 store (`rclone serve s3`), for the kill schedules and
/// faults of `S3KillScheduleTests`: it counts the bytes clients send (what went over the wire,
/// cut requests included), keeps each request line with the status the store answered (the
/// store's side of the story, for failure messages), and can fault a request: answer it itself
/// (the store never sees it), or pass it on and drop the connection instead of relaying the
/// answer (the store did the work; the client cannot know).
///
/// It can also hold: once the bytes relayed reach a mark, it relays no more until released, so a
/// kill lands at that mark (within one read of 256 KiB) however late the test's thread gets to it.
///
/// HTTP/1.1 without pipelining, as spoold's transports speak it: a connection's next request
/// starts after the answer to the last one, so the first bytes the store sends after a request
/// are its answer's status line. Request bodies are framed by Content-Length (spoold always sends one).
final class S3FaultProxy: @unchecked Sendable {
    enum Fault: Sendable {
        /// Answered by the proxy with this status and XML body; the connection is closed after.
        case answer(status: Int, body: String)
        /// Passed on; the store's answer is not relayed: the client's connection is dropped.
        case dropAnswer
    }

    let port: Int
    private let upstream: Int
    private let listener: Int32
    private let lock = NSLock()
    private var sent: Int64 = 0
    private var exchanges: [String] = []
    private var faultRule: (@Sendable (_ method: String, _ target: String) -> Fault?)?
    private var stopped = false
    /// Where relaying stops until `release()` (bytes sent), and the condition its waiters share.
    private let gate = NSCondition()
    private var holdAt: Int64?

    /// Starts relaying to `upstreamPort`; stopped at the test's end.
    init(_ test: XCTestCase, upstreamPort: Int) throws {
        upstream = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw NSError(domain: "S3FaultProxy", code: Int(errno)) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                relay(client)
            }
        }
        test.addTeardownBlock { [self] in stop() }
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Bytes clients sent through the proxy so far (request heads and bodies).
    var bytesSent: Int64 { lock.withLock { sent } }

    /// Every request so far, `METHOD target -> status` (or `-> dropped`, `-> faulted N`, `-> no answer`).
    var log: [String] { lock.withLock { exchanges } }

    /// Decides, for each request, whether to fault it (nil: relay it).
    func setFault(_ rule: (@Sendable (_ method: String, _ target: String) -> Fault?)?) { lock.withLock { faultRule = rule } }

    /// From now on, relays nothing more once `bytes` have been sent in all, until `release()`.
    func hold(at bytes: Int64) { gate.withLock { holdAt = bytes } }

    /// Waits until the bytes sent reach the mark of `hold(at:)`: the relay is held there.
    func waitUntilHeld(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return gate.withLock {
            while !isHeld {
                if !gate.wait(until: deadline) { return isHeld }
            }
            return true
        }
    }

    /// Relays again what the hold kept back (cut requests included: what their clients sent).
    func release() {
        gate.withLock {
            holdAt = nil
            gate.broadcast()
        }
    }

    /// Under `gate`.
    private var isHeld: Bool { holdAt.map { bytesSent >= $0 } ?? false }

    /// Blocks a relay thread while the relay is held.
    private func passHold() {
        gate.withLock {
            gate.broadcast()  // what was sent so far may have reached the mark: wake `waitUntilHeld`
            while isHeld { gate.wait() }
        }
    }

    func stop() {
        let first: Bool = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        release()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    // MARK: Relaying

    /// One client connection's requests in flight: the index of its exchange in `exchanges`, and
    /// whether to drop its answer.
    private final class Connection: @unchecked Sendable {
        let client: Int32
        let server: Int32
        let lock = NSLock()
        var awaiting: [(exchange: Int, drop: Bool)] = []
        var closed = false
        init(client: Int32, server: Int32) { (self.client, self.server) = (client, server) }

        func closeBoth() {
            let first: Bool = lock.withLock {
                defer { closed = true }
                return !closed
            }
            guard first else { return }
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
        }
    }

    private func relay(_ client: Int32) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(upstream).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(server)
            close(client)
            return
        }
        let connection = Connection(client: client, server: server)
        let done = DispatchGroup()
        done.enter()
        done.enter()
        Thread.detachNewThread { [self] in
            requests(connection)
            done.leave()
        }
        Thread.detachNewThread { [self] in
            answers(connection)
            done.leave()
        }
        Thread.detachNewThread {
            done.wait()
            close(client)
            close(server)
        }
    }

    /// Client to store: request by request, counted, faulted where the rule says.
    private func requests(_ connection: Connection) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        func readMore() -> Bool {
            let n = chunk.withUnsafeMutableBytes { read(connection.client, $0.baseAddress, $0.count) }
            guard n > 0 else { return false }
            buffer += chunk[0..<n]
            return true
        }
        defer { shutdown(connection.server, Int32(SHUT_WR)) }
        while true {
            // The head.
            var headEnd: Int?
            while headEnd == nil {
                if let range = buffer.firstRange(of: Array("\r\n\r\n".utf8)) { headEnd = range.upperBound; break }
                guard readMore() else { return }
            }
            let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let requestLine = lines[0].split(separator: " ")
            let method = requestLine.first.map(String.init) ?? ""
            let target = requestLine.count > 1 ? String(requestLine[1]) : ""
            let length = lines.dropFirst().compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first ?? 0
            let fault = lock.withLock { faultRule }?(method, target)
            let exchange: Int = lock.withLock {
                exchanges.append("\(method) \(target)")
                return exchanges.count - 1
            }
            if case .answer(let status, let body) = fault {
                // Read the body away, answer, close.
                var remaining = length - (buffer.count - headEnd!)
                while remaining > 0 {
                    let before = buffer.count
                    guard readMore() else { break }
                    remaining -= buffer.count - before
                }
                let answer = "HTTP/1.1 \(status) Faulted\r\nContent-Type: application/xml\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                S3FaultProxy.writeAll(connection.client, Array(answer.utf8))
                lock.withLock { exchanges[exchange] += " -> faulted \(status)" }
                connection.closeBoth()
                return
            }
            connection.lock.withLock { connection.awaiting.append((exchange, fault != nil)) }
            // The head and as much of the body as arrived with it, then the rest as it comes.
            var toSend = min(buffer.count, headEnd! + length)
            var remaining = headEnd! + length
            while remaining > 0 {
                if toSend > 0 {
                    passHold()
                    guard S3FaultProxy.writeAll(connection.server, Array(buffer[0..<toSend])) else { return }
                    lock.withLock { sent += Int64(toSend) }
                    gate.withLock { gate.broadcast() }
                    buffer.removeFirst(toSend)
                    remaining -= toSend
                }
                if remaining > 0 {
                    guard readMore() else { return }
                    toSend = min(buffer.count, remaining)
                }
            }
        }
    }

    /// Store to client: relayed as it comes; the first bytes after a request are its answer's
    /// status line, noted (or, for a request whose answer is to be dropped, the end).
    private func answers(_ connection: Connection) {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        defer {
            let unanswered = connection.lock.withLock { connection.awaiting }
            lock.withLock { for (exchange, _) in unanswered where !exchanges[exchange].contains(" -> ") { exchanges[exchange] += " -> no answer" } }
            connection.closeBoth()
        }
        while true {
            let n = chunk.withUnsafeMutableBytes { read(connection.server, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            let bytes = Array(chunk[0..<n])
            if bytes.starts(with: Array("HTTP/1.1 ".utf8)),
               let next = connection.lock.withLock({ connection.awaiting.isEmpty ? nil : connection.awaiting.removeFirst() })
            {
                let status = String(decoding: bytes.dropFirst(9).prefix(3), as: UTF8.self)
                lock.withLock { exchanges[next.exchange] += " -> " + status + (next.drop ? " dropped" : "") }
                if next.drop { return }
            }
            guard S3FaultProxy.writeAll(connection.client, bytes) else { return }
        }
    }

    @discardableResult
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}
