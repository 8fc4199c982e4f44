import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client for tests that need byte-level control (chunked bodies, keep-alive,
/// `Expect: 100-continue`). Every read and write times out, so no test can hang on it.
final class RawHTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// One response as read off the wire.
    struct Response {
        var status: Int
        var reason: String
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    private let fd: Int32
    private var pending: [UInt8] = []
    private var isClosed = false

    init(port: UInt16, timeoutSeconds: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(description: "connect failed: errno \(code)")
        }
    }

    deinit {
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n <= 0 { throw Failure(description: "send failed: errno \(errno)") }
                offset += n
            }
        }
    }

    /// Reads one response (interim ones like `100 Continue` included); the body is read by
    /// `Content-Length` unless the request was `HEAD` or the status has no body.
    func readResponse(toHEAD: Bool = false) throws -> Response {
        let headText = try readHead()
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2).map(String.init)
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(headText.debugDescription)")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = Response(status: status, reason: statusLine.count > 2 ? statusLine[2] : "", headers: headers, body: [])
        if !toHEAD, status >= 200, let length = response.header("Content-Length").flatMap(Int.init), length > 0 {
            response.body = try readExactly(length)
        }
        return response
    }

    /// True if the server closes (or resets) the connection before the read timeout, with no
    /// more bytes arriving.
    func isClosedByPeer() -> Bool {
        guard pending.isEmpty else { return false }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, 0)
        if n == 0 { return true }
        if n < 0 { return errno == ECONNRESET }
        return false
    }

    private func readHead() throws -> String {
        while true {
            if let end = findBlankLine() {
                let head = String(decoding: pending[0..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                return head
            }
            try fill()
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while pending.count < count { try fill() }
        let bytes = Array(pending[0..<count])
        pending.removeFirst(count)
        return bytes
    }

    private func findBlankLine() -> Int? {
        guard pending.count >= 4 else { return nil }
        for i in 0...(pending.count - 4)
        where pending[i] == 13 && pending[i + 1] == 10 && pending[i + 2] == 13 && pending[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func fill() throws {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buffer, buffer.count, 0)
        if n == 0 { throw Failure(description: "connection closed by the server") }
        if n < 0 { throw Failure(description: "recv failed or timed out: errno \(errno)") }
        pending += buffer[0..<n]
    }
}
