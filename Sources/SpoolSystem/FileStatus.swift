import Glibc

/// The parts of `struct stat` spoold looks at.
public struct FileStatus: Equatable, Sendable {
    public enum FileType: Sendable, Equatable { case regular, directory, symlink, fifo, socket, characterDevice, blockDevice, unknown }

    public var type: FileType
    public var size: Int64
    public var linkCount: Int
    public var device: UInt64
    public var inode: UInt64
    /// Modification time in milliseconds since the epoch (a pending json's mtime is its next-attempt time).
    public var modifiedMilliseconds: Int64
    /// The owner's user id (`st_uid`).
    public var owner: UInt32
    /// The permission bits (`st_mode & 0o7777`).
    public var permissions: UInt32
    /// What the file takes on disk: its allocated blocks (`st_blocks`, always in 512-byte units)
    /// in bytes. A 16-byte file takes a whole file-system block (4 KiB on ext4); a sparse file
    /// less than its size.
    public var allocatedBytes: Int64

    public init(
        type: FileType, size: Int64, linkCount: Int, device: UInt64, inode: UInt64, modifiedMilliseconds: Int64,
        owner: UInt32 = 0, permissions: UInt32 = 0o600, allocatedBytes: Int64 = 0
    ) {
        (self.type, self.size, self.linkCount) = (type, size, linkCount)
        (self.device, self.inode, self.modifiedMilliseconds) = (device, inode, modifiedMilliseconds)
        (self.owner, self.permissions, self.allocatedBytes) = (owner, permissions, allocatedBytes)
    }

    init(_ st: stat) {
        let type: FileType
        switch st.st_mode & S_IFMT {
        case S_IFREG: type = .regular
        case S_IFDIR: type = .directory
        case S_IFLNK: type = .symlink
        case S_IFIFO: type = .fifo
        case S_IFSOCK: type = .socket
        case S_IFCHR: type = .characterDevice
        case S_IFBLK: type = .blockDevice
        default: type = .unknown
        }
        self.init(
            type: type, size: Int64(st.st_size), linkCount: Int(st.st_nlink), device: UInt64(st.st_dev),
            inode: UInt64(st.st_ino),
            modifiedMilliseconds: Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec) / 1_000_000,
            owner: UInt32(st.st_uid), permissions: UInt32(st.st_mode & 0o7777), allocatedBytes: Int64(st.st_blocks) * 512)
    }
}
