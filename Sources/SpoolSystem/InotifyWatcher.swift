import Glibc

/// Event-driven pickup of new files (`inotify(7)`), so an idle daemon does no polling.
public final class InotifyWatcher: @unchecked Sendable {
    public struct Event: Equatable, Sendable {
        public var watch: Int32
        public var name: String
        public var mask: UInt32
        /// The kernel dropped events: the caller must rescan.
        public var overflowed: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }
        /// The name is a folder (`IN_ISDIR`).
        public var isFolder: Bool { mask & UInt32(IN_ISDIR) != 0 }
        public func has(_ bits: UInt32) -> Bool { mask & bits != 0 }

        public init(watch: Int32, name: String, mask: UInt32) { (self.watch, self.name, self.mask) = (watch, name, mask) }
    }

    /// A writer finished (close-write) or a file was renamed in (moved-to): the Maildir events.
    public static let arrivals = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)
    /// A writer closed the file (`IN_CLOSE_WRITE`).
    public static let closeWrite = UInt32(IN_CLOSE_WRITE)
    public static let created = UInt32(IN_CREATE)
    public static let movedFrom = UInt32(IN_MOVED_FROM)
    public static let movedTo = UInt32(IN_MOVED_TO)
    /// The watched folder itself was removed or renamed (`IN_DELETE_SELF`, `IN_MOVE_SELF`).
    public static let folderGone = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)
    /// The watch is gone (`IN_IGNORED`): its folder was removed, or `unwatch` was called.
    public static let watchRemoved = UInt32(IN_IGNORED)
    /// incoming/ and each of its subfolders: arrivals, new subfolders, names leaving, and the
    /// folder itself going away.
    public static let incomingFolder = arrivals | created | movedFrom | folderGone

    public let fd: Int32

    public init() throws {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError.last(.inotifyInit, path: "-") }
    }

    /// Takes over the inotify instance an earlier image of this process handed on across
    /// `execve` (its watches, and the events queued since that image last read them); nil unless
    /// `fd` is one. Watching a folder again returns its watch's descriptor (the kernel keeps one
    /// watch per folder and instance).
    public init?(adopting fd: Int32) {
        guard ProcessImage.isInotify(fd), (try? ProcessImage.setCloseOnExec(fd, true)) != nil else { return nil }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return nil }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Watches the directory open as `directory` (through /proc/self/fd, so no path is re-resolved).
    @discardableResult
    public func watch(_ directory: FileDescriptor, label: String, mask: UInt32 = InotifyWatcher.arrivals) throws -> Int32 {
        let wd = inotify_add_watch(fd, "/proc/self/fd/\(directory.rawValue)", mask | UInt32(IN_ONLYDIR))
        guard wd >= 0 else { throw SystemError.last(.inotifyAddWatch, path: label) }
        return wd
    }

    /// `inotify_rm_watch(2)`; a watch already gone is fine.
    public func unwatch(_ wd: Int32) { _ = inotify_rm_watch(fd, wd) }

    /// Everything queued now; empty when nothing is.
    public func readEvents() -> [Event] {
        var events: [Event] = []
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n <= 0 { return events }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let header = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = UnsafeRawBufferPointer(start: buffer + nameStart, count: Int(header.len))
                let name = FileName.decode(nameBytes.prefix(while: { $0 != 0 }))
                events.append(Event(watch: header.wd, name: name, mask: header.mask))
                offset = nameStart + Int(header.len)
            }
        }
    }
}
