import Glibc
import SpoolCore

/// Writes a `multipart/form-data` body to a file: preamble, the blob copied in 1 MiB pieces,
/// epilogue. Memory stays flat whatever the blob's size, and the file's size is the exact
/// `Content-Length`. (A bound stream as the body would avoid the copy, but URLSession on Linux
/// has not handled streamed bodies reliably.)
enum MultipartBodyFile {
    static let chunkSize = 1 << 20

    struct BuildError: Error, CustomStringConvertible {
        var description: String
    }

    /// Creates `path` (O_EXCL|O_NOFOLLOW, mode 0600) and returns its length; removes it on failure.
    static func build(_ form: MultipartForm, blobPath: String, expectedSize: Int64, at path: String) throws -> Int64 {
        unlink(path)  // a leftover of an attempt that was cut short
        let out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw BuildError(description: "cannot create \(path): \(errnoText())") }
        var ok = false
        defer {
            close(out)
            if !ok { unlink(path) }
        }
        let input = open(blobPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard input >= 0 else { throw BuildError(description: "cannot read the blob: \(errnoText())") }
        defer { close(input) }
        try writeAll(out, form.preamble, path: path)
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var copied: Int64 = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw BuildError(description: "cannot read the blob: \(errnoText())")
            }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try writeAll(out, UnsafeRawBufferPointer(rebasing: $0[0..<n]), path: path) }
            copied += Int64(n)
        }
        guard copied == expectedSize else {
            throw BuildError(description: "the blob changed size (\(copied) B, spooled as \(expectedSize) B)")
        }
        try writeAll(out, form.epilogue, path: path)
        ok = true
        return form.bodyLength(blobSize: copied)
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { try writeAll(fd, $0, path: path) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw BuildError(description: "cannot write \(path): \(errnoText())") }
            offset += n
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
