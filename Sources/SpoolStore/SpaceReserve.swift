import Glibc
import SpoolSystem

/// `SPOOL/index.reserve`: room kept on the spool's file system so that outcomes can still be
/// recorded when it is full.
///
/// The daemon preallocates it (`posix_fallocate`, 256 KiB) before it first takes files in, and
/// again before taking files in after it was released. A
/// commit that finds no room for its index records or staged jsons releases it (truncates it to
/// nothing, which frees its blocks at once) and tries once more; uploads then go on recording
/// their outcomes and deleting what they sent, which frees more. Taking new items in never uses it.
public final class SpaceReserve {
    public static let fileName = "index.reserve"
    /// Room for thousands of index records and a few hundred rewritten jsons.
    public static let size: Int64 = 256 << 10

    private let fs: any FileSystem
    private let root: FileDescriptor
    /// True once this process filled the reserve, until it releases it.
    public private(set) var isWhole = false

    init(root: FileDescriptor, fs: any FileSystem) {
        self.root = root
        self.fs = fs
    }

    /// Makes the reserve whole (creating it when missing). Returns false when the file system has
    /// no room for it, or it cannot be made (the caller goes on without: the reserve is a margin).
    @discardableResult
    public func fill() -> Bool {
        guard let fd = try? fs.open(Self.fileName, relativeTo: root, flags: [.writeOnly, .create], mode: 0o600) else { return false }
        defer { fs.close(fd) }
        guard (try? fs.status(of: fd).type) == .regular else { return false }
        guard (try? fs.allocate(fd, length: Self.size)) != nil else {
            // Give back whatever a failed preallocation took (room for the next try, or for others).
            try? fs.truncate(fd, to: 0)
            return false
        }
        isWhole = true
        return true
    }

    /// Frees the reserve's blocks; returns whether there were any to free.
    public func release() -> Bool {
        guard let fd = try? fs.open(Self.fileName, relativeTo: root, flags: [.writeOnly, .nonBlocking], mode: 0) else { return false }
        defer { fs.close(fd) }
        guard let status = try? fs.status(of: fd), status.type == .regular, status.size > 0,
              (try? fs.truncate(fd, to: 0)) != nil
        else { return false }
        isWhole = false
        return true
    }
}
