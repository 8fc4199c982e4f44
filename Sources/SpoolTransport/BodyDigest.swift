import SpoolCore

/// Hashes a request body before it is sent (`--content-digest`, S3 payload hashes, tus checksums): the same
/// parts the body stream sends (a multipart frame around the blob), the blob read from the
/// descriptor the spool opened, in pieces of at most 1 MiB so memory stays flat whatever the
/// blob's size; a compressed body is measured (and hashed) in its coded form (`measure`). Both
/// transports use it.
enum BodyDigest {
    static let chunkSize = 1 << 20

    struct DigestError: Error, CustomStringConvertible {
        var description: String
    }

    /// SHA-256 of `parts`, the blob read to exactly its recorded size.
    static func sha256(of parts: [RequestBody.Part]) throws -> [UInt8] {
        try digest(of: parts, into: BulkSHA256())
    }

    /// MD5 of `parts` (for comparing a blob with an object whose ETag is its MD5).
    static func md5(of parts: [RequestBody.Part]) throws -> [UInt8] {
        try digest(of: parts, into: BulkSHA256(md5: true))
    }

    /// SHA-1 of `parts` (a tus `Upload-Checksum`, for a server that offers nothing stronger).
    static func sha1(of parts: [RequestBody.Part]) throws -> [UInt8] {
        try digest(of: parts, into: BulkSHA256(.sha1))
    }

    /// The coded form of `parts` (`GzipStream`, padded to `padTo`) read once: the number of bytes
    /// it sends, and their SHA-256 (or MD5) when a hasher is given. Sending reads the same form
    /// again (`BodyReader`), which must come out as long.
    /// - Parameter finalizing: false leaves `hasher` open for more (several bodies hashed as one).
    static func measure(
        _ parts: [RequestBody.Part], coding: ContentCoding, padTo: Int64 = 0, hashing hasher: BulkSHA256?, finalizing: Bool = true
    ) throws -> (length: Int64, digest: [UInt8]?) {
        let stream = GzipStream(parts, padTo: padTo)
        var buffer = [UInt8](repeating: 0, count: GzipStream.step)
        var length: Int64 = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { stream.read(into: $0.baseAddress!, count: $0.count) }
            if n == 0 { break }
            guard n > 0 else {
                let blob = parts.lazy.compactMap { part -> BlobBody? in if case .blob(let blob, _, _) = part { blob } else { nil } }.first
                throw DigestError(description: "cannot compress the body: \(stream.failure ?? blob?.failure ?? "read failed")")
            }
            hasher.map { hasher in buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) } }
            length += Int64(n)
        }
        return (length, finalizing ? try hasher?.finalize() : nil)
    }

    private static func digest(of parts: [RequestBody.Part], into hasher: BulkSHA256) throws -> [UInt8] {
        // No bigger than the largest blob part: a 4 KiB body must not zero a 1 MiB buffer.
        let longest = parts.map { part -> Int64 in if case .bytes = part { 0 } else { part.length } }.max() ?? 0
        var buffer = [UInt8](repeating: 0, count: Int(min(Int64(chunkSize), max(longest, 1))))
        for part in parts {
            switch part {
            case .bytes(let bytes):
                hasher.update(bytes)
            case .blob(let blob, let offset, let length):
                try hash(blob, from: offset, length: length, into: hasher, buffer: &buffer)
            }
        }
        return try hasher.finalize()
    }

    private static func hash(_ blob: BlobBody, from start: Int64, length: Int64, into hasher: BulkSHA256, buffer: inout [UInt8]) throws {
        var offset: Int64 = 0
        while offset < length {
            let wanted = Int(min(Int64(buffer.count), length - offset))
            let n = buffer.withUnsafeMutableBytes { blob.read(into: $0.baseAddress!, count: wanted, at: start + offset) }
            guard n > 0 else {
                throw DigestError(description: "cannot read the body: \(blob.failure ?? "read failed")")
            }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            offset += Int64(n)
        }
    }
}
