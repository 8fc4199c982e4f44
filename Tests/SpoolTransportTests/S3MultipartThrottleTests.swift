import Foundation
import SpoolCore
import SpoolTransport
import Synchronization
import XCTest

/// A multipart upload whose steps the store throttles: each throttled step (a part, the
/// CreateMultipartUpload, the completion) is sent again within the attempt at the daemon's
/// lowered rate, instead of failing the pass; the rate hears every answer.
final class S3MultipartThrottleTests: XCTestCase {
    /// A store that answers `SlowDown` to the first `throttle[request]` requests of each kind
    /// (`POST uploads=`, `PUT partNumber=2`, `POST uploadId=`...), and otherwise like S3.
    private final class ThrottlingStore: UploadTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var remaining: [String: Int]
        private var seen: [(request: String, at: Double)] = []

        init(throttle: [String: Int]) { remaining = throttle }

        var requests: [(request: String, at: Double)] { lock.withLock { seen } }

        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            let query = request.url.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            let kind = "\(request.method) \(query.prefix { $0 != "&" })"
            let throttled: Bool = lock.withLock {
                seen.append((kind, Date().timeIntervalSinceReferenceDate))
                guard let left = remaining[kind], left > 0 else { return false }
                remaining[kind] = left - 1
                return true
            }
            let outcome: UploadOutcome
            if throttled {
                outcome = .status(503, excerpt: "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>")
            } else if request.method == "POST" && query == "uploads=" {
                let body = "<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>"
                outcome = .answer(200, body: body)
            } else if request.method == "PUT" {
                outcome = .answer(200, etag: "\"\(kind)\"")
            } else {
                outcome = .status(200, excerpt: "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>")
            }
            DispatchQueue.global().async { completion(outcome) }
        }

        func cancelAll() {}
    }

    private func upload(through store: ThrottlingStore, pacer: RequestPacer?) throws -> UploadOutcome {
        let request = try uploadRequest(to: "http://127.0.0.1:9/bucket/big.bin", size: (10 << 20) + 1)  // three parts of 5 MiB
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1")
        let transport = S3SigningTransport(
            wrapping: store, signer: signer, clock: SystemClock(), multipart: .init(partSize: 5 << 20, concurrency: 3, deadlineSeconds: 10),
            pacer: pacer)
        let ended = expectation(description: "the attempt ends")
        let result = Mutex<UploadOutcome?>(nil)
        transport.start(request) { outcome in
            result.withLock { $0 = outcome }
            ended.fulfill()
        }
        wait(for: [ended], timeout: 30)
        return try XCTUnwrap(result.withLock { $0 })
    }

    func testThrottledSteps_areSentAgainWithinTheAttempt_atTheLoweredRate() throws {
        let store = ThrottlingStore(throttle: ["POST uploads=": 1, "PUT partNumber=2": 3, "POST uploadId=u1": 1])
        let pacer = RequestPacer(settings: .init(floor: 50))  // waits of 20-40 ms at most: a quick test
        let outcome = try upload(through: store, pacer: pacer)

        XCTAssertEqual(outcome.class, .success, outcome.summary)
        let kinds = store.requests.map(\.request)
        XCTAssertEqual(kinds.filter { $0 == "POST uploads=" }.count, 2, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "PUT partNumber=2" }.count, 4, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "PUT partNumber=1" }.count, 1, "parts not throttled go once: \(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "POST uploadId=u1" }.count, 2, "\(kinds)")
        XCTAssertEqual(kinds.last, "POST uploadId=u1")
        XCTAssertEqual(pacer.current(now: SystemClock().now()).throttledAnswers, 5, "the rate heard every throttled answer")
        // Each re-send waited for a token of the lowered rate (at most 50 a second here, and one
        // to two token intervals after a cut).
        let part2 = store.requests.filter { $0.request == "PUT partNumber=2" }.map(\.at)
        let gaps = zip(part2.dropFirst(), part2).map { $0 - $1 }
        XCTAssertGreaterThanOrEqual(gaps.min() ?? 0, 0.019, "\(gaps)")
    }

    /// Without the daemon's rate (no pacer), a throttled step ends the pass, throttled: the
    /// engine then hands the attempt back and lowers the rate itself.
    func testWithoutARate_aThrottledStepEndsThePass_asThrottled() throws {
        let store = ThrottlingStore(throttle: ["PUT partNumber=2": 1])
        let outcome = try upload(through: store, pacer: nil)
        XCTAssertEqual(outcome.class, .throttled, outcome.summary)
    }
}
