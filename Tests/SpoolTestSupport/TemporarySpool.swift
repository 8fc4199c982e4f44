import Foundation
import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem

/// A unique directory `spoold-tests-XXXXXX` under /tmp (or `parent`) for one test, removed by
/// `cleanUp()` or deinit.
public final class TemporarySpool {
    /// The temporary directory itself.
    public let directory: String
    /// `directory/spool`: where the spool is created (so `directory` can also hold outside files).
    public var spoolPath: String { directory + "/spool" }
    private var removed = false

    /// - Parameter parent: the folder to make it in (/tmp when nil).
    public init(in parent: String? = nil) throws {
        let pattern = "\(parent ?? "/tmp")/spoold-tests-XXXXXX"
        var template = Array(pattern.utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw SystemError.last("mkdtemp", path: pattern) }
        directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `/dev/shm` when it is a tmpfs this user can write with at least `bytes` free, else nil.
    ///
    /// For fixtures of tens of thousands of files whose assertions do not depend on being on a
    /// disk: on this project's shared 2-core machines writing and removing them on the disk
    /// took most of such a test's time, and many times longer while other programs wrote (100,000
    /// items: 30 s to write on the disk, as long again to remove; on a tmpfs 4 s and 1 s).
    public static func memoryFolder(withRoomFor bytes: Int64) -> String? {
        let path = "/dev/shm"
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        let isTmpfs = mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == path && fields[2] == "tmpfs"
        }
        var fs = statvfs()
        guard isTmpfs, access(path, W_OK) == 0, statvfs(path, &fs) == 0 else { return nil }
        return Int64(fs.f_bavail) * Int64(fs.f_frsize) >= bytes ? path : nil
    }

    deinit { cleanUp() }

    public func cleanUp() {
        guard !removed else { return }
        removed = true
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Opens (creating) the spool in this directory.
    public func open(fs: any FileSystem = PosixFileSystem()) throws -> Spool {
        try Spool(path: spoolPath, fs: fs)
    }

    public func path(_ folder: SpoolFolder, _ name: String) -> String { "\(spoolPath)/\(folder.rawValue)/\(name)" }

    /// Writes a file into a folder of the spool (or any path under `directory` with `atPath:`).
    @discardableResult
    public func write(_ bytes: [UInt8], to name: String, in folder: SpoolFolder) throws -> String {
        let path = path(folder, name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @discardableResult
    public func write(_ bytes: [UInt8], atPath path: String) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    public func read(_ folder: SpoolFolder, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path(folder, name))))
    }

    public func read(atPath path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Sorted names in a spool folder (dot-names included).
    public func names(in folder: SpoolFolder) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(spoolPath)/\(folder.rawValue)")) ?? []).sorted()
    }

    /// Sorted names in the spool root.
    public func rootNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: spoolPath)) ?? []).sorted()
    }

    /// Writes an item's two files straight into a state folder with plain calls and no sync
    /// (thousands of items in a test): its blob of `payload` and its json, at `attempt`; the
    /// json's mtime set when given (a tried pending item's next-attempt time).
    public func writeItem(
        _ metadata: ItemMetadata, payload: [UInt8], in folder: SpoolFolder = .pending, attempt: Int = 0, mtime: Timestamp? = nil
    ) throws {
        guard let id = ItemID(metadata.id) else { throw SystemError("writeItem", path: metadata.id, errno: Errno(rawValue: EINVAL)) }
        try writeQuickly(path(folder, ItemFileName(id: id, attempt: attempt, kind: .blob).description), payload)
        try writeQuickly(path(folder, ItemFileName(id: id, attempt: attempt, kind: .json).description), MetadataCodec.encode(metadata), mtime: mtime)
    }

    private func writeQuickly(_ path: String, _ bytes: [UInt8], mtime: Timestamp? = nil) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("open", path: path, errno: .current) }
        defer { Glibc.close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw SystemError("write", path: path, errno: .current) }
        if let mtime {
            let ms = mtime.millisecondsSinceEpoch
            var times = [timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000)]
            times.append(times[0])
            guard futimens(fd, &times) == 0 else { throw SystemError("futimens", path: path, errno: .current) }
        }
    }

    /// `lstat` of a path: inode and link count, or nil when absent.
    public static func inode(of path: String) -> (inode: UInt64, links: Int)? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return (UInt64(st.st_ino), Int(st.st_nlink))
    }
}

/// Items for tests: ids in creation order and metadata filled in.
public struct TestItems {
    private var generator = ItemIDGenerator(processTag: 0x5eed)
    private var clock: Int64

    public init(startingAt milliseconds: Int64 = 1_795_000_000_000) { clock = milliseconds }

    public mutating func id(_ name: String = "file") -> ItemID {
        clock += 1
        return generator.next(at: Timestamp(millisecondsSinceEpoch: clock), originalName: name)
    }

    public mutating func metadata(_ name: String = "file") -> ItemMetadata {
        let id = id(name)
        return ItemMetadata(
            id: id, originalName: name, size: 0, contentType: "application/octet-stream",
            createdAt: Timestamp(millisecondsSinceEpoch: clock))
    }

    public mutating func incoming(_ name: String, state: ItemState = .pending) -> NewItem {
        NewItem(source: .incoming(name), metadata: metadata(name), state: state)
    }

    public mutating func external(_ path: String, move: Bool) -> NewItem {
        let name = String(path.split(separator: "/").last ?? "file")
        return NewItem(source: .external(path: path, move: move), metadata: metadata(name))
    }
}
