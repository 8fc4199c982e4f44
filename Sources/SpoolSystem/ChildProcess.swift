import CSpoolShims
import Glibc

/// A shell command run as a child in its own process group (`posix_spawn`), waited for with a
/// timeout: how hooks run. Each child is reaped exactly once, by `wait`.
public struct ChildProcess: Sendable {
    public let pid: pid_t

    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Starts `/bin/sh -c command` with exactly `environment` (`NAME=value` entries), and the
    /// descriptor limit spoold started with (`OpenFileLimit.childPrologue`); see
    /// `spoold_spawn_shell` for the descriptors and signals it gets.
    public static func spawnShell(_ command: String, environment: [String], quiet: Bool) throws(SystemError) -> ChildProcess {
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) }
        cEnvironment.append(nil)
        defer { for entry in cEnvironment { free(entry) } }
        var pid: pid_t = 0
        let rc = cEnvironment.withUnsafeBufferPointer { envp in
            spoold_spawn_shell(OpenFileLimit.childPrologue + command, envp.baseAddress, quiet ? 1 : 0, &pid)
        }
        guard rc == 0 else { throw SystemError(.posixSpawn, path: "/bin/sh", errno: Errno(rawValue: rc)) }
        return ChildProcess(pid: pid)
    }

    /// Waits up to `seconds` for the child to exit; nil if it is still running. The child is
    /// not reaped here, so its pid (and process group id) cannot be reused while we signal it.
    /// Waits on a pidfd (`pidfd_open`, `poll`); on kernels without one, checks every 50 ms.
    public func waitForExit(seconds: Double) -> Bool {
        let deadline = monotonicMilliseconds() + Int64(seconds * 1000)
        let pidfd = spoold_pidfd_open(pid)
        defer { if pidfd >= 0 { close(pidfd) } }
        while true {
            if hasExited() { return true }
            let left = deadline - monotonicMilliseconds()
            if left <= 0 { return false }
            if pidfd >= 0 {
                var fds = [pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 1, Int32(clamping: left))
            } else {
                _ = poll(nil, 0, Int32(min(left, 50)))
            }
        }
    }

    /// Sends `signal` to the child's whole process group (the shell and what it started).
    public func signalGroup(_ signal: Int32) {
        _ = kill(-pid, signal)
    }

    /// Reaps the child, waiting for it to end (`waitpid`).
    public func wait() -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return .exited(-1) }
        }
        return ChildProcess.termination(status)
    }

    /// Whether the child has exited, without reaping it (`waitid` with `WNOWAIT`).
    private func hasExited() -> Bool {
        while true {
            let r = spoold_child_has_exited(pid)
            if r >= 0 { return r == 1 }
            guard errno == EINTR else { return true }  // ECHILD: nothing left to wait for
        }
    }

    private static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    private func monotonicMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
