import Glibc
import SpoolCore
import SpoolSystem
import SpoolStore
import SpoolTestSupport
@testable import SpoolTransport
import XCTest

/// A failed write or fsync stops the daemon, also for an upload's own durable progress (an S3 part log): the spool failing
/// under an attempt stops the daemon; nothing about the item is acknowledged or retried.
final class SpoolFailureTests: EngineTestCase {
    func testSpoolFailureOutcome_stopsTheEngine_leavesTheItemInflight_andTakesNoNewWork() throws {
        try drop("a.bin")
        try drop("b.bin")
        // Only multipart items report spool failures, and they are never sent directly.
        let embedded = try start(configuration(direct: false))
        XCTAssertEqual(embedded.transport.started.count, 1)

        try embedded.transport.answerNext(.spoolFailure("cannot record part 2 in the spool's part log: fsync: EIO"))
        XCTAssertThrowsError(try embedded.advanceTime(by: 0)) { error in
            guard case .progressNotRecorded(_, let cause)? = error as? SpoolError else {
                return XCTFail("expected progressNotRecorded, got \(error)")
            }
            XCTAssertTrue(cause.contains("part 2"), cause)
        }
        XCTAssertEqual(embedded.transport.started.count, 1, "no new work after the failure (a retry would start b.bin or a.bin again)")
        XCTAssertEqual(attempts(in: .inflight), [1], "not acknowledged: left for start-up recovery, its attempt counted once")
        XCTAssertEqual(attempts(in: .pending), [0])
    }

    /// A part log that cannot be written is the spool failing; a record too long for the log is
    /// the store's answer at fault, retried like any bad answer.
    func testJournalErrors_areTypedBySource() {
        let answer = HTTPAnswer(status: 200)
        let failed = S3MultipartUpload.journalFailure(SystemError(.fsync, path: "parts/x.log", errno: .ioError), what: "part 1", answer: answer)
        guard case .spoolFailure = failed else { return XCTFail("\(failed)") }
        let refused = S3MultipartUpload.journalFailure(PartJournalRefusal("the ETag is too long to record"), what: "part 1", answer: answer)
        XCTAssertEqual(refused.httpStatus, 200, "the store's own answer, no status made up")
        XCTAssertEqual(refused.class, .retryable)
        XCTAssertEqual(refused.errorText, "cannot record part 1: the ETag is too long to record")
    }
}
