import Dispatch
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// Within one engine round (one index fsync), the new claims move and their uploads start before
/// the finished items' files are touched: a freed upload slot waits for the fsync and nothing else.
final class RoundOrderTests: XCTestCase {
    /// Answers every upload with a 500, on another thread, and notes when each upload started.
    final class RefusingTransport: UploadTransport, @unchecked Sendable {
        private let queue = DispatchQueue(label: "refusing-transport", attributes: .concurrent)
        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            queue.async { completion(.status(500)) }
        }
        func cancelAll() {}
    }

    func testClaimsOfARound_moveBeforeItsFinishedItems() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let count = 200
        _ = try temp.open()
        for i in 0..<count { try temp.write(Array("item \(i)".utf8), to: "file-\(i).txt", in: .incoming) }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        // One attempt: every 500 parks its item in failed/ (a rename, like a requeue, done in the round).
        let configuration = EngineConfiguration(
            url: URLTemplate("http://127.0.0.1:9/"), policy: RetryPolicy(maximumAttempts: 1), settleSeconds: 0,
            exitWhenIdle: true)
        let engine = try Engine(
            spool: spool, transport: RefusingTransport(), clock: SystemClock(), configuration: configuration,
            log: EventLog(minimumLevel: .error, clock: { SystemClock().now() }), processTag: 7)
        fs.resetLog()
        let summary = try engine.run()
        XCTAssertEqual(summary.failed, count)

        // Split the log at each index fsync; in each part, no claim may follow a parked item.
        var mixedRounds = 0
        var round: [RecordingFileSystem.Call] = []
        func check() {
            let claims = round.indices.filter { round[$0].operation == .rename && round[$0].directory == "pending" && round[$0].toDirectory == "inflight" }
            let parked = round.indices.filter { round[$0].operation == .rename && round[$0].directory == "inflight" && round[$0].toDirectory == "failed" }
            guard let lastClaim = claims.last, let firstParked = parked.first else { return }
            mixedRounds += 1
            XCTAssertLessThan(lastClaim, firstParked, "a claim waited for a finished item: \(round)")
        }
        for call in fs.calls {
            if call.operation == .sync && call.name == SpoolFolder.indexFileName {
                check()
                round = []
            } else {
                round.append(call)
            }
        }
        check()
        XCTAssertGreaterThan(mixedRounds, 0, "no round both claimed and finished items; the test shows nothing")
    }
}
