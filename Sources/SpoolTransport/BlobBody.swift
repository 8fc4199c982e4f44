import Glibc
import Synchronization

/// One attempt's blob, as a descriptor the spool opened (O_NOFOLLOW, checked with fstat): the
/// only source a request body is read from.
///
/// Foundation never gets a path: `uploadTask(fromFile:)` would open the name again and follow a
/// symlink swapped in after the check. Reads are `pread(2)` at explicit offsets, so every body
/// stream made from it (a redirect hop, libcurl's rewind) starts at byte 0 independently. The
/// transport closes it when the attempt ends; the last reference closes it too, so a request
/// dropped without an attempt leaks nothing.
public final class BlobBody: Sendable {
    /// The size the item's json records; a stream of this blob delivers exactly this many bytes.
    public let size: Int64
    /// The open descriptor, or -1 once closed. Reads hold the lock, so a close never lets a read
    /// reach a descriptor number the kernel has handed to another file.
    private let descriptor: Mutex<Int32>
    /// Why a read came up short (the blob shrank under us): the attempt's outcome then says so.
    private let shortRead = Mutex<String?>(nil)

    /// Takes ownership of `descriptor`.
    public init(descriptor: Int32, size: Int64) {
        self.descriptor = Mutex(descriptor)
        self.size = size
    }

    deinit { close() }

    /// No blob at all, for a request that sends no body outside any attempt (an abort by `purge`).
    public static var none: BlobBody { BlobBody(descriptor: -1, size: 0) }

    /// `close(2)`, once; later reads fail.
    public func close() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = Glibc.close(fd)
            fd = -1
        }
    }

    /// Why the blob could not be read to its recorded size, if it could not.
    public var failure: String? { shortRead.withLock { $0 } }

    /// `pread(2)` of up to `count` bytes at `offset`, EINTR retried, never past `size`. Returns the
    /// count read; -1 when closed, on a read error, or when the file ends before `size` (the
    /// blob changed after it was checked: an item error).
    public func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> Int {
        let wanted = Int(min(Int64(count), max(0, size - offset)))
        guard wanted > 0 else { return 0 }
        let result: Int = descriptor.withLock { fd in
            guard fd >= 0 else { return -1 }
            while true {
                let n = pread(fd, buffer, wanted, off_t(offset))
                if n < 0, errno == EINTR { continue }
                return n
            }
        }
        if result == 0 {
            shortRead.withLock { $0 = "its payload shrank while it was sent (ended at \(offset) B, spooled as \(size) B)" }
            return -1
        }
        if result < 0 {
            let text = String(cString: strerror(errno))
            shortRead.withLock { $0 = "its payload could not be read at \(offset) B: \(text)" }
        }
        return result
    }
}
