import Foundation
import SpoolCore
import SpoolTransport
import UploadReceiver
import XCTest

/// `spoold purge`'s aborts: several at once, each bounded by its deadline.
final class S3UploadAbortTests: XCTestCase {
    private func uploads(_ count: Int, to receiver: UploadReceiver) -> [S3UploadAbort.Upload] {
        var ids = ItemIDGenerator(processTag: 2)
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1")
        return (0..<count).map { i in
            S3UploadAbort.Upload(
                uploadID: "upload-\(i)", url: receiver.baseURL + "/bucket/key-\(i)",
                id: ids.next(at: Timestamp(millisecondsSinceEpoch: 1_795_000_000_000), originalName: nil), signer: signer)
        }
    }

    private func start(_ script: ResponseScript) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script, keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    func testSilentStore_abortsRunTogether_eachEndsAtItsDeadline() throws {
        let receiver = try start(.always(ScriptedResponse.faulted(.neverAnswer)))
        let started = Date()
        let confirmed = S3UploadAbort.abort(
            uploads(S3UploadAbort.concurrency, to: receiver),
            transport: S3UploadAbort.urlSessionTransport(for: S3UploadAbort.concurrency, timeoutSeconds: 1),
            clock: SystemClock(), timeoutSeconds: 1)
        let elapsed = Date().timeIntervalSince(started)

        XCTAssertEqual(confirmed, Array(repeating: false, count: S3UploadAbort.concurrency))
        // One at a time, they would take 8 deadlines.
        XCTAssertLessThan(elapsed, 4, "the aborts waited for each other")
    }

    func testAnsweringStore_confirmsEachAbort_withItsUploadID() throws {
        let receiver = try start(.always(204))
        let confirmed = S3UploadAbort.abort(
            uploads(3, to: receiver), transport: S3UploadAbort.urlSessionTransport(for: 3, timeoutSeconds: 10),
            clock: SystemClock(), timeoutSeconds: 10)

        XCTAssertEqual(confirmed, [true, true, true])
        let targets = Set(receiver.requests.map(\.target))
        XCTAssertEqual(targets, Set((0..<3).map { "/bucket/key-\($0)?uploadId=upload-\($0)" }))
        XCTAssertTrue(receiver.requests.allSatisfy { $0.method == "DELETE" })
    }
}
