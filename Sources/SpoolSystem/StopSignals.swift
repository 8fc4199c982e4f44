import CSpoolShims
import Glibc

/// SIGTERM and SIGINT as a descriptor the engine polls (`signalfd(2)`), never as a handler.
///
/// Both signals are blocked (in the creating thread and every thread it starts later), so the
/// kernel keeps them pending until the engine reads them; a blocked signal also stays pending
/// across `execve(2)`. That is what makes a recycle safe: a SIGTERM that arrives while the daemon
/// re-executes itself is read by the new image's `StopSignals` (the mask is inherited), not lost
/// and not fatal. Create it before any thread that must not see the signals is started.
public final class StopSignals: @unchecked Sendable {
    /// The signalfd to poll for readability.
    public let fd: Int32

    public init() throws {
        let fd = spoold_stop_signals_open()
        guard fd >= 0 else { throw SystemError.last(.signalfd, path: "SIGTERM/SIGINT") }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// How many stop signals arrived since the last call (reads them; never blocks).
    public func take() -> Int { Int(spoold_stop_signals_take(fd)) }
}
