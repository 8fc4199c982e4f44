import SpoolSystem
import Foundation
import SpoolCore
import XCTest

@testable import SpoolTransport

/// Bodies are hashed with libcrypto (`BulkSHA256`), signatures and HMACs with spoold's own
/// SHA-256: both must give the FIPS 180-4 digests, and the same digest for any body, however
/// it is split into pieces and whatever its size relative to the 1 MiB read buffer.
final class BulkSHA256Tests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    func testFIPSVectors() throws {
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ]
        for (message, digest) in vectors {
            let hasher = BulkSHA256()
            hasher.update(Array(message.utf8))
            XCTAssertEqual(hex(try hasher.finalize()), digest, "\"\(message)\"")
        }
        // One million "a", fed in uneven pieces.
        let hasher = BulkSHA256()
        let a = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        var offset = 0
        var step = 1
        while offset < a.count {
            let end = min(a.count, offset + step)
            a.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[offset..<end])) }
            offset = end
            step = step * 7 % 65_537 + 1
        }
        XCTAssertEqual(hex(try hasher.finalize()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// The body digest both transports send (`Content-Digest`, S3 payload hash) over a blob read
    /// from its descriptor: equal to spoold's own SHA-256 of the same bytes, for sizes around the
    /// read buffer's, whole, framed by a multipart form, and as byte ranges (S3 parts).
    func testBodyDigest_matchesSwiftSHA256_forBlobsFramesAndRanges() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bulk-sha-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for size in [0, 1, 4096, (1 << 20) + 17] {
            var bytes = [UInt8](repeating: 0, count: size)
            bytes.withUnsafeMutableBufferPointer { all in
                for i in all.indices { all[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 7) }
            }
            let path = folder.appendingPathComponent("blob-\(size)").path
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            let fd = open(path, O_RDONLY)
            XCTAssertGreaterThanOrEqual(fd, 0)
            let blob = BlobBody(descriptor: FileDescriptor(rawValue: fd), size: Int64(size))
            defer { blob.close() }

            XCTAssertEqual(try BodyDigest.sha256(of: [.blob(blob, offset: 0, length: blob.size)]), SHA256.hash(bytes), "blob of \(size) bytes")
            let head = Array("--frame\r\n".utf8)
            let tail = Array("\r\n--frame--\r\n".utf8)
            XCTAssertEqual(
                try BodyDigest.sha256(of: [.bytes(head), .blob(blob, offset: 0, length: blob.size), .bytes(tail)]), SHA256.hash(head + bytes + tail),
                "framed blob of \(size) bytes")
            let start = size / 3
            let length = size - start - size / 5
            XCTAssertEqual(
                try BodyDigest.sha256(of: [.blob(blob, offset: Int64(start), length: Int64(length))]),
                SHA256.hash(bytes[start..<(start + length)]), "range of \(size) bytes")
        }
    }

    /// A blob shorter than its recorded size (it changed after it was spooled) fails the hash:
    /// no digest of the wrong bytes is ever sent.
    func testBodyDigest_shortBlob_throws() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bulk-sha-short-\(getpid())").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(count: 100)))
        defer { unlink(path) }
        let blob = BlobBody(descriptor: FileDescriptor(rawValue: open(path, O_RDONLY)), size: 200)
        defer { blob.close() }
        XCTAssertThrowsError(try BodyDigest.sha256(of: [.blob(blob, offset: 0, length: blob.size)]))
    }
}
