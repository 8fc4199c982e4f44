import Glibc
import SpoolCore
import SpoolSystem
import SpoolStore
import SpoolTestSupport
@testable import SpoolTransport
import XCTest

/// A failed write or fsync stops the daemon, also for an upload's own durable progress (an S3
/// part log): the engine performs the part logs' records, so a record it cannot make durable is
/// its own failure, as a failed sync of its round is; nothing about the item is acknowledged or
/// retried.
final class SpoolFailureTests: EngineTestCase {
    func testPartRecordFsyncFails_stopsTheEngine_withProgressNotRecorded_leavesTheItemInflight_andTakesNoNewWork() throws {
        try drop("a.bin")
        try drop("b.bin")
        // Part logs are kept for multipart items, which are never sent directly.
        var configuration = configuration(direct: false)
        configuration.multipartThreshold = 5
        let embedded = try start(configuration)
        XCTAssertEqual(embedded.transport.started.count, 1)
        let request = try XCTUnwrap(embedded.transport.started.first?.request)
        let upload = PartLogCodec.State(size: request.size, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: request.url)
        XCTAssertEqual(try embedded.record(.s3Upload(upload), of: request), .recorded)
        XCTAssertEqual(try embedded.record(.part(1, etag: "\"e1\""), of: request), .recorded)

        fs.failCall(.sync, errno: EIO) { $0.name == "\(request.id).log" }
        XCTAssertThrowsError(try embedded.record(.part(2, etag: "\"e2\""), of: request)) { error in
            guard case .progressNotRecorded(let item, let cause)? = error as? SpoolError else {
                return XCTFail("expected progressNotRecorded, got \(error)")
            }
            XCTAssertEqual(item, request.id.description)
            XCTAssertTrue(cause.contains("part 2"), cause)
        }
        XCTAssertEqual(embedded.transport.started.count, 1, "no new work after the failure (a retry would start b.bin or a.bin again)")
        XCTAssertEqual(attempts(in: .inflight), [1], "not acknowledged: left for start-up recovery, its attempt counted once")
        XCTAssertEqual(attempts(in: .pending), [0])
    }

    /// A record too long for the log is the store's answer at fault: the driver hears it (its
    /// attempt fails as the item's), nothing is written, and the engine goes on.
    func testPartRecordTooLong_isRefused_toTheDriver_andTheEngineGoesOn() throws {
        try drop("a.bin")
        var configuration = configuration(direct: false)
        configuration.multipartThreshold = 5
        let embedded = try start(configuration)
        let request = try XCTUnwrap(embedded.transport.started.first?.request)
        let upload = PartLogCodec.State(size: request.size, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: request.url)
        XCTAssertEqual(try embedded.record(.s3Upload(upload), of: request), .recorded)
        let writes = fs.calls(.write).count
        let answer = try embedded.record(.part(1, etag: String(repeating: "e", count: 1 << 16)), of: request)
        XCTAssertEqual(answer, .refused(PartJournalRefusal("the ETag is too long to record")))
        XCTAssertEqual(fs.calls(.write).count, writes, "a refused record writes nothing")
        try embedded.transport.answerNext(.status(500))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(attempts(in: .pending), [1], "retried like any failed attempt")
    }

    /// A part log that cannot hold a record is the store's answer at fault, retried like any bad
    /// answer (the spool failing is the engine's: above).
    func testJournalRefusal_isTheStoresAnswer() {
        let answer = HTTPAnswer(status: 200)
        let refused = S3MultipartUpload.journalRefused(PartJournalRefusal("the ETag is too long to record"), what: "part 1", answer: answer)
        XCTAssertEqual(refused.httpStatus, 200, "the store's own answer, no status made up")
        XCTAssertEqual(refused.class, .retryable)
        XCTAssertEqual(refused.errorText, "cannot record part 1: the ETag is too long to record")
    }
}
