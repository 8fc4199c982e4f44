import Glibc

/// The self-pipe trick: other threads (upload completions, signal handlers) write a byte to wake
/// the engine's `poll(2)`; the engine drains it. (Glibc's module map does not export eventfd.)
public final class WakeupPipe: @unchecked Sendable {
    /// The end to poll for readability.
    public let readFD: Int32
    private let writeFD: Int32

    public init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SystemError.last(.pipe, path: "-") }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        (readFD, writeFD) = (ends[0], ends[1])
    }

    deinit {
        Glibc.close(readFD)
        Glibc.close(writeFD)
    }

    /// Async-signal-safe: a single write(2) to a non-blocking pipe (a full pipe already wakes).
    public func signal() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeFD, &byte, 1)
    }

    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while Glibc.read(readFD, &buffer, 256) > 0 {}
    }
}
