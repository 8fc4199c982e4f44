import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolTestSupport
import XCTest

/// The AbortMultipartUpload requests the daemon owes: recorded before the upload is forgotten,
/// sent, sent again after the items' backoff while the store does not answer, recorded as done
/// once it does, and taken up again at the next start. Under the manual clock.
final class MultipartAbortTests: EngineTestCase {
    private func owedUploads() throws -> [String] {
        let spool = try temp.open()
        return withExtendedLifetime(spool) { spool.partLogs.aborts.owed.map(\.uploadID) }
    }
    private func deletes(_ embedded: EmbeddedEngine) -> [String] {
        embedded.transport.started.filter { $0.request.method == "DELETE" }.map(\.request.url)
    }

    /// An item that goes to failed/ owes its upload's abort (recorded, its part log gone); a 503
    /// is retried after the backoff, not before; a 204 ends the debt.
    func testFailedItem_owesItsAbort_retriedUntilConfirmed() throws {
        try drop("big.bin")
        var configuration = configuration(settle: 0, policy: RetryPolicy(maximumAttempts: 1, baseDelaySeconds: 1))
        configuration.multipartThreshold = 5
        let embedded = try start(configuration)
        try embedded.advanceTime(by: 0)
        let request = try XCTUnwrap(embedded.transport.started.first?.request)
        let recorder = try XCTUnwrap(request.partRecorder)
        try embedded.record(.s3Upload(.init(size: 18, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: request.url)), of: request)
        try embedded.transport.answerNext(.status(400))
        try embedded.advanceTime(by: 0)

        XCTAssertEqual(temp.names(in: .failed).filter { $0.hasSuffix(".json") }.count, 1)
        XCTAssertEqual(try owedUploads(), ["u1"], "recorded before the part log went")
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp.spoolPath + "/parts/\(recorder.id).log"))
        XCTAssertEqual(deletes(embedded), [request.url + "?uploadId=u1"], "sent at once")

        try embedded.transport.answerNext(.status(503))
        try embedded.advanceTime(by: 0.49)
        XCTAssertEqual(deletes(embedded).count, 1, "not before the backoff (at least half of --retry-base)")
        try embedded.advanceTime(by: 0.51)
        XCTAssertEqual(deletes(embedded).count, 2, "sent again within --retry-base")
        try embedded.transport.answerNext(.status(204))
        try embedded.advanceTime(by: 600)
        XCTAssertEqual(deletes(embedded).count, 2, "confirmed: never sent again")
        XCTAssertEqual(try owedUploads(), [])
    }

    /// Aborts owed by an earlier run are sent at start; one the store refuses for good (a 4xx
    /// other than 404) is held, not retried, until the next start, which sends it again.
    func testOwedAtStart_areSent_aRefusalWaitsForTheNextStart() throws {
        let spool = try temp.open()
        let id = ItemID("20261121T141003123Z-0000-9f3ab2c1-p")!
        try spool.partLogs.aborts.owe([
            OwedAbort(id: id, region: "us-east-1", uploadID: "a", url: "http://127.0.0.1:9/b/k", since: clock.now()),
            OwedAbort(id: id, region: "us-east-1", uploadID: "b", url: "http://127.0.0.1:9/b/k", since: clock.now()),
        ])
        let embedded = try start(configuration())
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(Set(deletes(embedded)), ["http://127.0.0.1:9/b/k?uploadId=a", "http://127.0.0.1:9/b/k?uploadId=b"])
        try embedded.transport.answerNext(.status(405, excerpt: "<Error><Code>MethodNotAllowed</Code></Error>"))
        try embedded.transport.answerNext(.status(404, excerpt: "<Error><Code>NoSuchUpload</Code></Error>"))
        try embedded.advanceTime(by: 3600)
        XCTAssertEqual(deletes(embedded).count, 2, "the refused one is held")
        let refused = deletes(embedded)[0].components(separatedBy: "uploadId=")[1]
        XCTAssertEqual(try owedUploads(), [refused], "still owed")

        let restarted = try start(configuration())
        try restarted.advanceTime(by: 0)
        XCTAssertEqual(deletes(restarted), ["http://127.0.0.1:9/b/k?uploadId=\(refused)"], "sent again at the next start")
    }
}
