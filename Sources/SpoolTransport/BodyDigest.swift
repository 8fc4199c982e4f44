import SpoolCore

/// Hashes a request body before it is sent (`--content-digest`): the same parts the body stream
/// sends (a multipart frame around the blob), the blob read from the descriptor the spool opened,
/// in 1 MiB pieces so memory stays flat whatever the blob's size.
enum BodyDigest {
    static let chunkSize = 1 << 20

    struct DigestError: Error, CustomStringConvertible {
        var description: String
    }

    /// SHA-256 of `parts`, the blob read to exactly its recorded size.
    static func sha256(of parts: [BodyInputStream.Part]) throws -> [UInt8] {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        for part in parts {
            switch part {
            case .bytes(let bytes):
                hasher.update(bytes)
            case .blob(let blob):
                var offset: Int64 = 0
                while offset < blob.size {
                    let n = buffer.withUnsafeMutableBytes { blob.read(into: $0.baseAddress!, count: $0.count, at: offset) }
                    guard n > 0 else {
                        throw DigestError(description: "cannot read the body: \(blob.failure ?? "read failed")")
                    }
                    buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                    offset += Int64(n)
                }
            }
        }
        return hasher.finalize()
    }
}
