import SpoolCore
import SpoolStore
import SpoolTestSupport
import XCTest

/// `{date}` and `{hour}` in `--url` come from the item's recorded creation time, so a retry on
/// another day reaches the same URL (for S3, the same key: a resumed multipart upload stays whole).
final class DatedURLTests: EngineTestCase {
    func testEveryAttempt_usesTheItemsCreationDate_notTheClockAtUpload() throws {
        // Taken in at 23:59:59.900 UTC on 2026-11-23; retried 2 and 4 days later.
        let takenIn = CivilTime(year: 2026, month: 11, day: 23, hour: 23, minute: 59, second: 59, millisecond: 900).timestamp
        clock.set(takenIn)
        try drop("cam 7.jpg")
        var configuration = configuration(policy: RetryPolicy(maximumAttempts: 3, maximumBackoffSeconds: 604_800))
        configuration.url = URLTemplate("http://127.0.0.1:9/up/{date}/{hour}/")
        configuration.rescanSeconds = 86_400  // fewer idle steps over the 5 days
        let embedded = try start(configuration)
        let busy = UploadOutcome.answered(HTTPAnswer(status: 500, retryAfterSeconds: 2 * 86_400))
        embedded.transport.autoAnswer = busy
        try embedded.transport.answerNext(busy)
        try embedded.advanceTime(by: 5 * 86_400)

        let started = embedded.transport.started
        XCTAssertEqual(started.map { CivilTime($0.at).day }, [23, 25, 27], "three attempts on three days")
        XCTAssertEqual(started.map(\.request.url), Array(repeating: "http://127.0.0.1:9/up/2026-11-23/23/cam%207.jpg", count: 3))
        let json = try XCTUnwrap(temp.names(in: .failed).first { $0.hasSuffix(".json") }, "parked after the third")
        let metadata = try MetadataCodec.decode(temp.read(.failed, json))
        XCTAssertEqual(metadata.createdAt, takenIn.iso8601, "the date in the URL is the one the json records")
    }
}
