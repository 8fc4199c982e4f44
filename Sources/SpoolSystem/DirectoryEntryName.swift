import Glibc

/// The name of an entry `readdir` returned, read up to its NUL and no further.
///
/// `struct dirent` declares `d_name[256]`, but glibc packs entries by `d_reclen`: a short name's
/// entry ends well before those 256 bytes, and the last entry of a buffer may end at its very
/// end. Reading `entry.pointee.d_name` as a Swift value copies all 256 bytes, past the entry and,
/// for the last one, past the buffer: a test run died with SIGSEGV in that copy (the transport's
/// sweeper listing `/proc/self/fd`). Every `readdir` caller reads names through here.
public enum DirectoryEntryName {
    /// The name's bytes (without the NUL), valid until the next `readdir` on the same stream.
    public static func bytes(of entry: UnsafePointer<dirent>) -> UnsafeRawBufferPointer {
        let start = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return UnsafeRawBufferPointer(start: start, count: strlen(start.assumingMemoryBound(to: CChar.self)))
    }

    /// The name as text (the names of `/proc` folders are ASCII).
    public static func text(of entry: UnsafePointer<dirent>) -> String {
        String(decoding: bytes(of: entry), as: UTF8.self)
    }
}
