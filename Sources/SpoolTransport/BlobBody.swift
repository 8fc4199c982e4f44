import SpoolSystem
import Synchronization

/// One attempt's blob, as a descriptor the spool opened (O_NOFOLLOW, checked with fstat): the
/// only source a request body is read from.
///
/// Foundation never gets a path: `uploadTask(fromFile:)` would open the name again and follow a
/// symlink swapped in after the check. Reads are `pread(2)` at explicit offsets, so every body
/// stream made from it (a redirect hop, libcurl's rewind) starts at byte 0 independently. The
/// transport closes it when the attempt ends; the last reference closes it too, so a request
/// dropped without an attempt leaks nothing. Both calls go through SpoolSystem (`FileDescriptor`).
public final class BlobBody: Sendable {
    /// The size the item's json records; a stream of this blob delivers exactly this many bytes.
    public let size: Int64
    /// The open descriptor, or nil once closed. Reads hold the lock, so a close never lets a read
    /// reach a descriptor number the kernel has handed to another file.
    private let descriptor: Mutex<FileDescriptor?>
    /// Why a read came up short (the blob shrank under us): the attempt's outcome then says so.
    private let shortRead = Mutex<String?>(nil)

    /// Takes ownership of `descriptor`.
    public init(descriptor: FileDescriptor, size: Int64) {
        self.descriptor = Mutex(descriptor)
        self.size = size
    }

    /// No descriptor at all.
    private init(size: Int64) {
        descriptor = Mutex(nil)
        self.size = size
    }

    deinit { close() }

    /// No blob at all, for a request that sends no body outside any attempt (an abort by `purge`).
    public static var none: BlobBody { BlobBody(size: 0) }

    /// `close(2)`, once; later reads fail.
    public func close() {
        descriptor.withLock { fd in
            fd?.close()
            fd = nil
        }
    }

    /// Why the blob could not be read to its recorded size, if it could not.
    public var failure: String? { shortRead.withLock { $0 } }

    /// Records why a body read from the blob could not be sent as measured (its compressed form
    /// changed length, zlib failed): the attempt's outcome then says so, as for a short read.
    func noteFailure(_ reason: String) {
        shortRead.withLock { $0 = $0 ?? reason }
    }

    /// `pread(2)` of up to `count` bytes at `offset`, never past `size`. Returns the count read;
    /// -1 when closed, on a read error, or when the file ends before `size` (the blob changed
    /// after it was checked, which a spooled blob never may).
    public func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> Int {
        let wanted = Int(min(Int64(count), max(0, size - offset)))
        guard wanted > 0 else { return 0 }
        let result: Result<Int, SystemError>? = descriptor.withLock { fd in
            guard let fd else { return nil }
            do {
                return .success(try fd.read(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(start: buffer, count: wanted)))
            } catch {
                return .failure(error as? SystemError ?? SystemError(.pread, path: "fd \(fd.rawValue)", errno: .ioError))
            }
        }
        switch result {
        case nil:
            return -1
        case .success(0):
            shortRead.withLock { $0 = "its payload shrank while it was sent (ended at \(offset) B, spooled as \(size) B)" }
            return -1
        case .success(let n):
            return n
        case .failure(let error):
            shortRead.withLock { $0 = "its payload could not be read at \(offset) B: \(error.errno)" }
            return -1
        }
    }
}
