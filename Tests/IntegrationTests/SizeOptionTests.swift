import Foundation
import XCTest

/// Every size option reads its value the one way (`ByteUnits`: K, M, G, T and KiB, MiB, GiB, TiB
/// are powers of 1024) and the daemon says the values back when it starts.
final class SizeOptionTests: XCTestCase {
    func testDaemon_readsEverySizeOptionTheSameWay_andSaysTheValuesBackAtStart() throws {
        let spool = try TestSpool(self)
        // An empty spool: the drain starts, says what it runs with, and ends.
        let drain = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/up/", "--max-spool-size", "5M", "--limit-rate", "1MiB"])
        XCTAssertEqual(drain.exitCode, 0, drain.stderr)
        XCTAssertTrue(drain.stderr.contains("--max-spool-size 5 MiB, --limit-rate 1 MiB/s)"), drain.stderr)

        let exact = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/up/", "--max-spool-size", "5000000", "--limit-rate", "500k",
             "--when-full", "drop-oldest"])
        XCTAssertEqual(exact.exitCode, 0, exact.stderr)
        XCTAssertTrue(exact.stderr.contains("--max-spool-size 5000000 B (drop-oldest), --limit-rate 500 KiB/s)"), exact.stderr)
    }

    func testDecimalLookingUnits_areRefusedAsAmbiguous_byEveryCommand() throws {
        let spool = try TestSpool(self)
        let file = spool.root + "/a.bin"
        try Data([1]).write(to: URL(fileURLWithPath: file))
        for arguments in [
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/", "--max-spool-size", "5MB"],
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/", "--limit-rate", "5MB"],
            ["enqueue", "--spool", spool.path, "--max-spool-size", "5MB", file],
        ] {
            let result = try SpooldProcess.run(arguments)
            XCTAssertEqual(result.exitCode, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains("'5MB' is ambiguous (powers of 1000 or of 1024?): write 5M or 5MiB"), result.stderr)
        }
        XCTAssertEqual(spool.files(in: "pending"), [], "nothing was added")
    }

    /// `--max-spool-size 45K` is 46,080 bytes: a queue that takes 45,056 bytes of disk (a
    /// 40,000-byte blob in ten 4 KiB blocks and its json in one) is below it; it is not below
    /// 45,000 (K was a power of 1000 for this option only).
    func testEnqueueMaxSpoolSize_KIsAPowerOf1024() throws {
        let spool = try TestSpool(self)
        let first = spool.root + "/first.bin", second = spool.root + "/second.bin"
        try Data(repeating: 7, count: 40_000).write(to: URL(fileURLWithPath: first))
        try Data(repeating: 8, count: 10).write(to: URL(fileURLWithPath: second))
        XCTAssertEqual(try SpooldProcess.run(["enqueue", "--spool", spool.path, first]).exitCode, 0)
        let status = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let disk = try XCTUnwrap((object["queue"] as? [String: Any])?["diskBytes"] as? Int)
        let kib = disk / 1000
        guard kib * 1000 <= disk && disk < kib * 1024 else { return XCTFail("the queue takes \(disk) B here (4 KiB blocks give 45,056)") }
        let admitted = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--max-spool-size", "\(kib)K", second])
        XCTAssertEqual(admitted.exitCode, 0, admitted.stderr)
        let refused = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--max-spool-size", "\(kib * 1000)", second])
        XCTAssertEqual(refused.exitCode, 75, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("the spool is full (--max-spool-size \(kib * 1000) B)"), refused.stderr)
    }
}
