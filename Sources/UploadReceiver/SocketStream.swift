#if canImport(Glibc)
import Glibc
#endif

/// Buffered reads and whole writes on one connected socket, used by a single connection thread.
///
/// Reads go through one 64 KiB scratch buffer; bytes read past what the caller needed (the start
/// of a body after a head, or a pipelined request) wait in `pending`. Large bodies pass through
/// in 64 KiB pieces without accumulating here.
final class SocketStream {
    static let readSize = 64 * 1024

    let fd: Int32
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var scratch = [UInt8](repeating: 0, count: SocketStream.readSize)

    init(fd: Int32) {
        self.fd = fd
    }

    /// Bytes read from the socket but not yet consumed.
    var bufferedCount: Int { pending.count - pendingStart }

    /// Outcome of waiting for a delimited piece (a head or a line).
    enum Delimited {
        case bytes([UInt8])
        /// The peer closed, or the socket failed, before the delimiter arrived.
        case closed
        /// More than the limit arrived without the delimiter.
        case tooLong
    }

    /// Reads up to and including the blank line that ends a request head; returns the head
    /// without that blank line. Leading blank lines (allowed before a request line) are skipped.
    func readHead(limit: Int) -> Delimited {
        var scanFrom = 0
        while true {
            while bufferedCount > 0, pending[pendingStart] == UInt8(ascii: "\r") || pending[pendingStart] == UInt8(ascii: "\n") {
                consume(1)
            }
            if let (headLength, consumed) = findEndOfHead(from: scanFrom) {
                if headLength > limit { return .tooLong }
                let head = Array(pending[pendingStart..<(pendingStart + headLength)])
                consume(consumed)
                return .bytes(head)
            }
            if bufferedCount > limit { return .tooLong }
            scanFrom = max(0, bufferedCount - 3)
            if !fill() { return .closed }
        }
    }

    /// Reads one line ending in LF (CRLF accepted) and returns it without the line ending.
    func readLine(limit: Int) -> Delimited {
        var scanFrom = 0
        while true {
            if let lf = pending[(pendingStart + scanFrom)...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = lf
                if end > pendingStart, pending[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = Array(pending[pendingStart..<end])
                consume(lf + 1 - pendingStart)
                return .bytes(line)
            }
            if bufferedCount > limit { return .tooLong }
            scanFrom = bufferedCount
            if !fill() { return .closed }
        }
    }

    /// Reads at most `maximum` bytes (at least one unless the peer closed) and hands them to
    /// `deliver`; returns how many were delivered, 0 at end of stream.
    func readSome(maximum: Int64, _ deliver: (ArraySlice<UInt8>) -> Void) -> Int {
        if bufferedCount > 0 {
            let n = Int(min(Int64(bufferedCount), maximum))
            deliver(pending[pendingStart..<(pendingStart + n)])
            consume(n)
            return n
        }
        let n = receive(maximum: Int(min(Int64(SocketStream.readSize), maximum)))
        if n > 0 { deliver(scratch[0..<n]) }
        return n
    }

    /// Reads exactly `count` bytes into `deliver`; returns false if the stream ended first.
    func readExactly(_ count: Int64, _ deliver: (ArraySlice<UInt8>) -> Void) -> Bool {
        var remaining = count
        while remaining > 0 {
            let n = readSome(maximum: remaining, deliver)
            if n == 0 { return false }
            remaining -= Int64(n)
        }
        return true
    }

    /// Reads and discards until the peer closes or the socket is shut down.
    func discardUntilClosed() {
        pending.removeAll()
        pendingStart = 0
        while receive(maximum: SocketStream.readSize) > 0 {}
    }

    /// Writes all of `bytes`; false if the peer is gone. Never raises SIGPIPE.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    /// Makes the coming `close` send RST instead of FIN (`SO_LINGER` on with a zero timeout).
    func resetOnClose() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Sends FIN (`shutdown(SHUT_WR)`); reading stays possible.
    func finish() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the sending side, then reads for a short while so the peer gets our last response
    /// before our close turns any unread request bytes into a reset. Bounded by `seconds` and
    /// by 1 MiB of discarded input.
    func lingeringShutdown(seconds: Int) {
        shutdown(fd, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var discarded = bufferedCount
        pending.removeAll()
        pendingStart = 0
        while discarded < 1 << 20 {
            let n = receive(maximum: SocketStream.readSize)
            if n <= 0 { break }
            discarded += n
        }
    }

    // MARK: - Private

    /// Finds the blank line ending a head in the pending bytes; returns the head's length
    /// (excluding the blank line) and the number of bytes to consume.
    private func findEndOfHead(from scanFrom: Int) -> (Int, Int)? {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var i = pendingStart + scanFrom
        let end = pending.count
        while i < end {
            if pending[i] == lf {
                if i + 1 < end, pending[i + 1] == lf { return (i + 1 - pendingStart, i + 2 - pendingStart) }
                if i + 2 < end, pending[i + 1] == cr, pending[i + 2] == lf {
                    return (i + 1 - pendingStart, i + 3 - pendingStart)
                }
            }
            i += 1
        }
        return nil
    }

    private func consume(_ count: Int) {
        pendingStart += count
        if pendingStart >= pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
    }

    /// Appends one read's worth of bytes to `pending`; false at end of stream or on error.
    private func fill() -> Bool {
        if pendingStart > 0, pendingStart >= pending.count / 2 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        let n = receive(maximum: SocketStream.readSize)
        if n <= 0 { return false }
        pending.append(contentsOf: scratch[0..<n])
        return true
    }

    /// One `recv` into `scratch`; returns the count, 0 at end of stream or on error.
    private func receive(maximum: Int) -> Int {
        scratch.withUnsafeMutableBytes { raw in
            while true {
                let n = recv(fd, raw.baseAddress!, min(maximum, raw.count), 0)
                if n < 0, errno == EINTR { continue }
                return max(n, 0)
            }
        }
    }
}
