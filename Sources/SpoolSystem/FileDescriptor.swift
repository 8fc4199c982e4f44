import Glibc

/// An open file or directory descriptor. Closing is explicit (`FileSystem.close`, or `close()`
/// for a descriptor outside the spool's file system seam).
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let standardOutput = FileDescriptor(rawValue: 1)
    public static let standardError = FileDescriptor(rawValue: 2)
}

// The calls made on descriptors that are not spool files, where no test seam is wanted: a blob
// already opened and checked (`BlobBody`), standard output and error.
extension FileDescriptor {
    /// `pread(2)` of up to `buffer.count` bytes at `offset`, EINTR retried: the count read, 0 at
    /// the end of the file.
    public func read(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw SystemError.last(.pread, path: "fd \(rawValue)")
        }
    }

    /// `close(2)`; errors are ignored (Linux always releases the descriptor).
    public func close() { _ = Glibc.close(rawValue) }

    /// `write(2)` of every byte: short writes continued, EINTR retried (`WriteLoop`).
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        try WriteLoop.writeAll(bytes, label: "fd \(rawValue)") { part in
            while true {
                let n = Glibc.write(rawValue, part.baseAddress, part.count)
                if n >= 0 { return n }
                if errno == EINTR { continue }
                throw SystemError.last(.write, path: "fd \(rawValue)")
            }
        }
    }

    /// Writes `text` whole, or as much as the descriptor takes: for standard output and error,
    /// where a failed write has nowhere to be reported.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { try? writeAll(UnsafeRawBufferPointer($0)) }
    }
}

/// The one loop over short writes, for the spool's files (`FileSystem.writeAll`) and for other
/// descriptors (`FileDescriptor.writeAll`).
enum WriteLoop {
    /// Calls `write` until every byte of `bytes` is written; a call that writes nothing fails
    /// with EIO (a full disk answers ENOSPC instead).
    static func writeAll(_ bytes: UnsafeRawBufferPointer, label: String, write: (UnsafeRawBufferPointer) throws -> Int) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try write(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            if n <= 0 { throw SystemError(.write, path: label, errno: .ioError) }
            offset += n
        }
    }
}
