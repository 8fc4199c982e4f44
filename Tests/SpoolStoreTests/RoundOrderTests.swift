import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// The real engine with its syncs on a thread of their own: each finished item moves only once
/// its new json and then its record are durable, and its folders are synced after it moved. The
/// rounds' claims never wait for any of it (`Engine+Durability`).
final class RoundOrderTests: XCTestCase {
    func testFinishedItems_moveOnlyOnceTheirJsonAndRecordAreDurable() throws {
        // One attempt: every 500 parks its item in failed/ (a rename, like a requeue).
        let count = 200
        let drain = try RecordedDrain(count: count, answer: .status(500), policy: RetryPolicy(maximumAttempts: 1))
        XCTAssertEqual(drain.summary.failed, count)
        let calls = drain.calls
        func isIndexWrite(_ call: RecordingFileSystem.Call) -> Bool { call.operation == .write && call.name == SpoolFolder.indexFileName }
        func isIndexSync(_ call: RecordingFileSystem.Call) -> Bool { call.operation == .sync && call.name == SpoolFolder.indexFileName }

        var parked = 0
        for (at, call) in calls.enumerated()
        where call.operation == .rename && call.directory == "inflight" && call.toDirectory == "failed" && call.name.hasSuffix(".blob") {
            parked += 1
            let json = call.name.replacingOccurrences(of: ".blob", with: ".json")
            guard let staged = calls[..<at].lastIndex(where: { $0.operation == .write && $0.directory == "tmp" && $0.name == json }) else {
                XCTFail("\(json) moved to failed/ with no new json staged")
                continue
            }
            let jsonSynced = calls[staged..<at].firstIndex { $0.operation == .sync && $0.name == json }
            // Its record: written after its json was (made durable, when it was synced alone).
            guard let recorded = calls[((jsonSynced ?? staged) + 1)..<at].firstIndex(where: isIndexWrite) else {
                XCTFail("\(json) moved to failed/ before its record was written")
                continue
            }
            let durable = calls[recorded..<at].contains { $0.operation == .syncFileSystem }
                || (jsonSynced != nil && calls[recorded..<at].contains(where: isIndexSync))
            XCTAssertTrue(durable, "\(json) moved to failed/ before its json and record were durable")
            XCTAssertTrue(
                calls[at...].contains { ($0.operation == .sync && $0.isDirectory && $0.name == "failed") || $0.operation == .syncFileSystem },
                "failed/ is never synced after \(json) moved in")
        }
        XCTAssertEqual(parked, count)
    }
}
