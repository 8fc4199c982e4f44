import Glibc
import SpoolCore

/// Hashes a body file before it is sent (`--content-digest`), in 1 MiB pieces so memory stays
/// flat whatever the blob's size.
enum FileDigest {
    static let chunkSize = 1 << 20

    struct DigestError: Error, CustomStringConvertible {
        var description: String
    }

    /// SHA-256 of the file at `path`, which must hold exactly `expectedSize` bytes.
    static func sha256(of path: String, expectedSize: Int64) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw DigestError(description: "cannot read the body: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var total: Int64 = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw DigestError(description: "cannot read the body: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            total += Int64(n)
        }
        guard total == expectedSize else {
            throw DigestError(description: "the body changed size (\(total) B, expected \(expectedSize) B)")
        }
        return hasher.finalize()
    }
}
