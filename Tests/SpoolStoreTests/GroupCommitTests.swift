import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import XCTest

/// The group-commit claim, counted: the real engine drains 1,000 items through a recording file
/// system and a transport that accepts everything, and the syncs per item are printed and bounded.
final class GroupCommitTests: XCTestCase {
    func testDrainOf1000Items_costsFewSyncsPerItem() throws {
        let count = 1000
        let drain = try RecordedDrain(count: count, answer: .status(201))

        XCTAssertEqual(drain.summary.ingested, count)
        XCTAssertEqual(drain.summary.uploaded, count)
        XCTAssertEqual(drain.leftovers, [])
        let calls = drain.calls
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
        // Batches of 8 files and more are made durable by syncfs, not per file. Files announced
        // a few at a time (inotify delivers in smaller groups on a loaded machine) make small
        // batches, which fsync each file: a few, never most (per file, this would be 2 per item).
        XCTAssertLessThanOrEqual(itemFileSyncs, count / 20, "ingest batches are made durable by syncfs, not per file")
    }

    /// The daemon's default: files sent straight from incoming/ that succeed cost no json and no
    /// index record at all, only their renames and unlinks, and the fsync of inflight/ that makes
    /// those unlinks durable, on the spool's background thread, once for the unlinks queued
    /// meanwhile (not once per file).
    func testDirectDrainOf1000Items_recordsNothing_andSyncsOnlyTheRemovals_inTheBackground() throws {
        let count = 1000
        let drain = try RecordedDrain(count: count, answer: .status(201), direct: true)
        XCTAssertEqual(drain.summary.uploaded, count)
        XCTAssertEqual(drain.leftovers, [])
        let syncs = drain.calls.filter { $0.operation == .sync || $0.operation == .syncFileSystem }
        let removals = syncs.filter { $0.name == "inflight" && $0.isDirectory }
        // Start-up recovery and index compaction sync a few times, whatever the count.
        XCTAssertLessThanOrEqual(syncs.count - removals.count, 16, "\(syncs.prefix(20))")
        XCTAssertGreaterThan(removals.count, 0, "the removals are made durable")
        XCTAssertLessThan(removals.count, count / 2, "one fsync for the removals queued together, not one per file")
        print("direct drain of \(count): \(removals.count) fsyncs of inflight/ for the removals")
        let jsons = drain.calls.filter { $0.operation == .write && $0.directory == "tmp" }
        XCTAssertEqual(jsons.count, 0, "no json written: \(jsons.prefix(5))")
        let records = drain.calls.filter { $0.operation == .write && $0.name == SpoolFolder.indexFileName }
        XCTAssertLessThanOrEqual(records.count, 1, "no index record per item: \(records.count) writes")
    }
}
