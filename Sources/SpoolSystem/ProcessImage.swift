import CSpoolShims
import Glibc

/// The calls that replace the running program with a fresh copy of itself: `execve(2)` of
/// `/proc/self/exe`, with every descriptor but the kept ones closed on exec.
///
/// The daemon recycles itself this way to give back memory a library keeps (see `spoold run
/// --recycle-after`): same pid, same arguments, a new heap.
public enum ProcessImage {
    /// The resident size of this process in KiB (VmRSS), from the second field of
    /// `/proc/self/statm` (pages); nil if it cannot be read.
    public static func residentKilobytes() -> Int? {
        guard let text = readKernelFile("/proc/self/statm", limit: 128) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * (sysconf(Int32(_SC_PAGESIZE)) / 1024)
    }

    /// The text of a small file the kernel makes (`/proc`, `/sys`: one `read(2)` gives it whole),
    /// at most `limit` bytes; nil when it cannot be read or is empty.
    public static func readKernelFile(_ path: String, limit: Int = 4096) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// Hands the heap's free pages back to the kernel (`malloc_trim(0)`). glibc keeps freed
    /// memory inside its heaps (a burst such as start-up recovery of a large queue leaves
    /// megabytes there); a trim returns it, so the resident size shows what is really held.
    public static func releaseFreeMemory() {
        _ = spoold_malloc_trim()
    }

    /// The resident size in KiB right after `releaseFreeMemory()`: what the process holds.
    public static func trimmedResidentKilobytes() -> Int? {
        releaseFreeMemory()
        return residentKilobytes()
    }

    /// Makes this process not dumpable (`prctl(PR_SET_DUMPABLE, 0)`): a crash or SIGQUIT writes no
    /// core, which would hold the secrets in memory, and other processes of the same user can no
    /// longer ptrace it or read its /proc/PID/ (environ, mem). An exec (a recycle) makes the new
    /// image dumpable again: it calls this once its secrets are loaded.
    public static func forbidCoreDumps() throws {
        guard spoold_forbid_core_dumps() == 0 else { throw SystemError.last(.forbidCoreDumps, path: "") }
    }

    /// Sets or clears FD_CLOEXEC on one descriptor (`fcntl(2)`).
    public static func setCloseOnExec(_ fd: Int32, _ on: Bool) throws {
        let flags = fcntl(fd, F_GETFD)
        guard flags >= 0, fcntl(fd, F_SETFD, on ? flags | FD_CLOEXEC : flags & ~FD_CLOEXEC) == 0 else {
            throw SystemError.last(.setCloseOnExec, path: "fd \(fd)")
        }
    }

    /// The descriptors open without FD_CLOEXEC: at start-up, the ones this process was given
    /// (a supervisor's pipe, a passed socket). A recycle passes them on as they came.
    public static func inheritedDescriptors() -> Set<Int32> {
        Set(openDescriptors().filter { fd in
            let flags = fcntl(fd, F_GETFD)
            return flags >= 0 && flags & FD_CLOEXEC == 0
        })
    }

    /// Replaces this process with a new run of its own executable. Descriptors 0-2 and `keep`
    /// survive; every other one (sockets a library left open, too) is closed on exec. Returns
    /// only if execve failed, with the error; `keep` is then close-on-exec again.
    public static func reexecute(arguments: [String], environment: [String], keep: [Int32]) -> SystemError {
        for fd in openDescriptors() where fd > 2 && !keep.contains(fd) { try? setCloseOnExec(fd, true) }
        for fd in keep {
            do { try setCloseOnExec(fd, false) } catch { return error as? SystemError ?? SystemError("fcntl", path: "fd \(fd)", errno: .badFileDescriptor) }
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        execve("/proc/self/exe", argv, envp)
        let error = SystemError.last(.execve, path: "/proc/self/exe")
        for pointer in argv + envp { free(pointer) }
        for fd in keep { try? setCloseOnExec(fd, true) }
        return error
    }

    /// A file in memory only (`memfd_create(2)`) named `name` and holding `bytes`, for the next
    /// image: pass its descriptor in `reexecute`'s `keep`. Nothing reaches a disk; the file goes
    /// with its last descriptor.
    public static func handOverFile(named name: String, bytes: [UInt8]) throws -> Int32 {
        let fd = spoold_memfd_create(name)
        guard fd >= 0 else { throw SystemError.last(.memfdCreate, path: name) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = SystemError.last(.write, path: name)
                Glibc.close(fd)
                throw error
            }
            written += n
        }
        return fd
    }

    /// Closes a file `handOverFile` made, when the exec it was made for failed.
    public static func withdrawHandedFile(_ fd: Int32) { Glibc.close(fd) }

    /// What `takeHandedFile` found in a file handed over.
    public enum HandedFile: Equatable, Sendable {
        case read([UInt8])
        /// Larger than the limit, or a read failed.
        case unreadable
    }

    /// Takes a file an earlier image handed over (`handOverFile` with this `name`): reads it from
    /// its start and closes it. nil, and `fd` left alone, unless `fd` is such a file
    /// (`/proc/self/fd/<fd>` names `/memfd:<name>`): an inherited number may name anything.
    public static func takeHandedFile(_ fd: Int32, named name: String, limit: Int) -> HandedFile? {
        guard fd > 2, let target = linkTarget("/proc/self/fd/\(fd)"), target == "/memfd:\(name) (deleted)" else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return .unreadable }
            if n == 0 { return .read(bytes) }
            guard bytes.count + n <= limit else { return .unreadable }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }

    /// Whether `fd` is an inotify instance (`/proc/self/fd/<fd>` names `anon_inode:inotify`): an
    /// inherited number may name anything.
    public static func isInotify(_ fd: Int32) -> Bool {
        fd > 2 && linkTarget("/proc/self/fd/\(fd)") == "anon_inode:inotify"
    }

    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This process's environment as `NAME=value` strings (`environ`).
    public static func environment() -> [String] {
        var result: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            result.append(String(cString: entry))
            cursor += 1
        }
        return result
    }

    private static func openDescriptors() -> [Int32] {
        guard let dir = opendir("/proc/self/fd") else { return [] }
        var open: [Int32] = []
        while let entry = readdir(dir) {
            let name = DirectoryEntryName.text(of: entry)
            if let fd = Int32(name) { open.append(fd) }
        }
        let own = dirfd(dir)
        closedir(dir)
        return open.filter { $0 != own }
    }
}
