import Dispatch
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// The group-commit claim, counted: the real engine drains 5,000 items through a recording file
/// system and a transport that accepts everything, and the syncs per item are printed and bounded.
final class GroupCommitTests: XCTestCase {
    /// Accepts every upload at once, on another thread, as URLSession would.
    final class AcceptingTransport: UploadTransport, @unchecked Sendable {
        private let queue = DispatchQueue(label: "accepting-transport", attributes: .concurrent)
        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            queue.async { completion(.status(201)) }
        }
        func cancelAll() {}
    }

    func testDrainOf5000Items_costsFewSyncsPerItem() throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        let count = 5000
        _ = try temp.open()
        for i in 0..<count { try temp.write(Array("item \(i)".utf8), to: "file-\(i).txt", in: .incoming) }

        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        let configuration = EngineConfiguration(url: URLTemplate("http://127.0.0.1:9/"), settleSeconds: 0, exitWhenIdle: true)
        let engine = try Engine(
            spool: spool, transport: AcceptingTransport(), clock: SystemClock(), configuration: configuration,
            log: EventLog(minimumLevel: .warning, clock: { SystemClock().now() }), processTag: 7)
        fs.resetLog()
        let summary = try engine.run()

        XCTAssertEqual(summary.ingested, count)
        XCTAssertEqual(summary.uploaded, count)
        XCTAssertEqual(temp.names(in: .pending) + temp.names(in: .inflight) + temp.names(in: .tmp), [])
        let calls = fs.calls
        let fileSyncs = calls.filter { $0.operation == .sync && !$0.isDirectory && !$0.name.hasPrefix(SpoolFolder.indexFileName) }.count
        let itemFileSyncs = calls.filter { $0.operation == .sync && ["tmp", "incoming"].contains($0.directory) }.count
        let indexSyncs = calls.filter { $0.operation == .sync && $0.name == SpoolFolder.indexFileName }.count
        let folderSyncs = calls.filter { $0.operation == .sync && $0.isDirectory }.count
        let fileSystemSyncs = calls.filter { $0.operation == .syncFileSystem }.count
        let total = fileSyncs + indexSyncs + folderSyncs + fileSystemSyncs
        let perItem = Double(total) / Double(count)
        print("""
            group commit, \(count) items drained: \(total) syncs = \(String(format: "%.3f", perItem)) per item \
            (file fsync \(fileSyncs), index fsync \(indexSyncs), folder fsync \(folderSyncs), syncfs \(fileSystemSyncs))
            """)
        // Without batching this would be at least 4 per item (blob, json, claim, done).
        XCTAssertLessThan(perItem, 1.5, "amortised syncs per item")
        XCTAssertEqual(itemFileSyncs, 0, "large ingest batches are made durable by syncfs, not per file")
    }
}
