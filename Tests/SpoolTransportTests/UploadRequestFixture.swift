import SpoolSystem
import Foundation
import SpoolCore
import SpoolTransport
import XCTest

/// A PUT of 1,000 bytes to `url`, its body read from a descriptor of a file already removed.
func uploadRequest(to url: String, size: Int = 1000) throws -> UploadRequest {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-request-\(UUID().uuidString)")
    try Data(repeating: 7, count: size).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let fd = open(file.path, O_RDONLY | O_CLOEXEC)
    XCTAssertGreaterThanOrEqual(fd, 0)
    var ids = ItemIDGenerator(processTag: 1)
    let id = ids.next(at: Timestamp(millisecondsSinceEpoch: 1_795_000_000_000), originalName: nil)
    return UploadRequest(
        id: id, attempt: 1, url: url, method: "PUT", body: BlobBody(descriptor: FileDescriptor(rawValue: fd), size: Int64(size)),
        contentType: "application/octet-stream", headers: [:])
}

extension UploadOutcome {
    /// An answer as a store gives it, for scripted transports: `body` is kept whole (and is the
    /// excerpt unless one is given).
    static func answer(
        _ status: Int, excerpt: String? = nil, body: String? = nil, etag: String? = nil, contentLength: Int64? = nil
    ) -> UploadOutcome {
        var answer = HTTPAnswer(status: status, excerpt: excerpt ?? body)
        answer.body = body.map { Array($0.utf8) }
        (answer.etag, answer.contentLength) = (etag, contentLength)
        return .answered(answer)
    }
}
