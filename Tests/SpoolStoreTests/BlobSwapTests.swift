import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// The body of an upload comes only from the descriptor the engine opened for it (O_NOFOLLOW,
/// fstat): a blob swapped between the claim and the upload fails the attempt without a request
/// (issue 11 item 5: blobs never change once spooled, and nothing in the spool leads spoold outside it).
final class BlobSwapTests: XCTestCase {
    /// Records every request it is given and answers 201.
    private final class RecordingTransport: UploadTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var started: [UploadRequest] = []
        var requests: [UploadRequest] { lock.withLock { started } }
        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            lock.withLock { started.append(request) }
            DispatchQueue.global().async { completion(.status(201)) }
        }
        func cancelAll() {}
    }

    /// Drains one item whose blob is replaced, right after its claim moved it to inflight/ and
    /// right before the upload opens it, by what `swap` makes at the blob's path.
    private func drainWithBlobSwapped(_ swap: @escaping @Sendable (_ blobPath: String, _ temp: String) -> Void) throws
        -> (requests: [UploadRequest], failed: [String: Any]?)
    {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        _ = try temp.open()
        try temp.write(Array("the real payload".utf8), to: "photo.jpg", in: .incoming)
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let inflight = temp.spoolPath + "/inflight/"
        let directory = temp.directory
        // The hold's condition runs just before the open it matches: the swap lands exactly there.
        fs.hold(.open, until: DispatchSemaphore(value: 1)) { call in
            if call.directory == "inflight", call.name.hasSuffix(".blob") { swap(inflight + call.name, directory) }
            return false
        }
        let transport = RecordingTransport()
        var configuration = EngineConfiguration(
            url: URLTemplate("http://127.0.0.1:9/"), policy: RetryPolicy(), settleSeconds: 0, exitWhenIdle: true)
        // A claimed item's blob is opened in inflight/; a direct upload reads the descriptor it
        // opened in incoming/ before the rename, which no swap in inflight/ reaches.
        configuration.directUploads = false
        let engine = try Engine(
            spool: spool, transport: transport, clock: SystemClock(), configuration: configuration,
            log: EventLog(minimumLevel: .error, clock: { SystemClock().now() }), processTag: 7)
        _ = try engine.run()
        let failedJSON = temp.names(in: .failed).first { $0.hasSuffix(".json") }
        let failed = try failedJSON.map {
            try JSONSerialization.jsonObject(with: Data(temp.read(.failed, $0))) as? [String: Any] ?? [:]
        }
        return (transport.requests, failed)
    }

    func testBlobSwappedForASymlinkAfterTheClaim_noRequest_itemFailsSayingSo() throws {
        let result = try drainWithBlobSwapped { blob, directory in
            let secret = directory + "/secret"
            _ = FileManager.default.createFile(atPath: secret, contents: Data("the secret payload".utf8))
            unlink(blob)
            symlink(secret, blob)
        }
        XCTAssertEqual(result.requests.count, 0, "nothing is sent through a symlink")
        let failed = try XCTUnwrap(result.failed)
        XCTAssertTrue((failed["failureReason"] as? String ?? "").contains("symbolic link"), "\(failed)")
        let attempts = try XCTUnwrap(failed["attempts"] as? [[String: Any]])
        XCTAssertEqual(attempts.count, 1)
        XCTAssertEqual(attempts[0]["outcome"] as? String, "final")
    }

    func testBlobSwappedForAFileOfAnotherSize_noRequest_itemFailsSayingSo() throws {
        let result = try drainWithBlobSwapped { blob, _ in
            unlink(blob)
            _ = FileManager.default.createFile(atPath: blob, contents: Data("a longer file that is not the payload".utf8))
        }
        XCTAssertEqual(result.requests.count, 0)
        let failed = try XCTUnwrap(result.failed)
        XCTAssertTrue((failed["failureReason"] as? String ?? "").contains("changed size"), "\(failed)")
    }

    func testBlobUntouched_oneRequestWithTheOpenedBlob() throws {
        let result = try drainWithBlobSwapped { _, _ in }
        XCTAssertEqual(result.requests.count, 1)
        XCTAssertEqual(result.requests.first?.size, Int64("the real payload".utf8.count))
        XCTAssertNil(result.failed)
    }
}
