import Glibc
import SpoolSystem

/// One daemon per spool: `SPOOL/spoold.lock`, held with flock(2) while `run` or `drain` works.
///
/// flock is released by the kernel when the process dies (even by SIGKILL), so a stale lock file
/// never blocks a restart; the pid inside is only for messages and `status`.
///
/// A recycling daemon keeps the lock across `execve(2)`: the lock belongs to the open file, and
/// a descriptor without FD_CLOEXEC survives the exec, so there is no moment when the spool is
/// unlocked. The new image adopts that descriptor (`inherited`).
public final class SpoolLock {
    private let fs: any FileSystem
    /// The open lock file; kept across a recycle's exec.
    public let descriptor: FileDescriptor

    /// Takes the lock or throws `SpoolError.alreadyRunning` naming the holder's pid.
    ///
    /// - Parameter inherited: a descriptor the previous image of this process held the lock
    ///   with. Used only if it is this spool's lock file (same device and inode) and the lock on
    ///   it is ours (flock on the same open file succeeds at once); otherwise ignored.
    public init(spool: Spool, inherited: FileDescriptor? = nil) throws {
        fs = spool.fs
        if let inherited, SpoolLock.isLockFile(inherited, of: spool),
           (try? spool.fs.lock(inherited, exclusive: true, wait: false)) == true
        {
            try ProcessImage.setCloseOnExec(inherited.rawValue, true)
            descriptor = inherited
            return
        }
        let fd: FileDescriptor
        do {
            fd = try fs.open(SpoolFolder.lockFileName, relativeTo: spool.root, flags: [.readWrite, .create], mode: 0o600)
        } catch {
            throw spool.explained(error)
        }
        guard try fs.lock(fd, exclusive: true, wait: false) else {
            let holder = (try? fs.readAll(fd, limit: 64)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
            fs.close(fd)
            throw SpoolError.alreadyRunning(path: spool.path, pid: holder?.trimmingNewline ?? "?")
        }
        descriptor = fd
        try fs.truncate(fd, to: 0)
        do {
            try fs.writeAll(fd, Array("\(getpid())\n".utf8), label: SpoolFolder.lockFileName)
        } catch let error as SystemError where error.isOutOfSpace {
            // The flock is the lock; the pid is for messages. A full disk must not stop a start.
            try? fs.truncate(fd, to: 0)
        }
    }

    private static func isLockFile(_ fd: FileDescriptor, of spool: Spool) -> Bool {
        guard let open = try? spool.fs.status(of: fd), open.type == .regular,
              let named = try? spool.fs.status(of: SpoolFolder.lockFileName, in: spool.root)
        else { return false }
        return open.device == named.device && open.inode == named.inode
    }

    deinit { fs.close(descriptor) }

    /// The pid of the daemon holding the lock, or nil when none runs.
    public static func holder(of spool: Spool) -> String? {
        let fs = spool.fs
        guard let fd = try? fs.open(SpoolFolder.lockFileName, relativeTo: spool.root, flags: [.readOnly], mode: 0) else {
            return nil
        }
        defer { fs.close(fd) }
        guard let free = try? fs.lock(fd, exclusive: false, wait: false), !free else {
            _ = try? fs.unlock(fd)
            return nil
        }
        let text = (try? fs.readAll(fd, limit: 64)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
        return text?.trimmingNewline ?? "?"
    }
}

extension String {
    fileprivate var trimmingNewline: String { split(separator: "\n").first.map(String.init) ?? self }
}
