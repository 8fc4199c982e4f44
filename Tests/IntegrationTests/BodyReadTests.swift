import Foundation
import Glibc
import UploadReceiver
import XCTest

/// Reading an upload's body never changes its blob: a read that updated the access time would be
/// a metadata change, waiting for the file system's journal behind another program's large fsync
/// (seconds, with every libcurl transfer on its thread stuck behind it). Both transports, queued
/// items and files sent straight from incoming/.
final class BodyReadTests: TransportTestCase {
    private func accessTime(_ path: String) throws -> Int {
        var st = stat()
        guard stat(path, &st) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return st.st_atim.tv_sec
    }

    /// An access time an hour before the file's mtime: any read would update it (relatime).
    private func ageAccessTime(_ path: String) throws -> Int {
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        let old = st.st_mtim.tv_sec - 3600
        var times = [timespec(tv_sec: old, tv_nsec: 0), st.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        return old
    }

    private func run(direct: Bool) throws {
        let receiver = UploadReceiver(script: .always(500))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        try spool.drop("body.bin", payload(70_000, seed: 9))
        let base = ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--max-attempts", "1", "--settle", "0"]
            + transportArguments
        var old: Int
        if direct {
            old = try ageAccessTime(spool.incoming + "/body.bin")
        } else {
            // Queued as an item (a drain stopped by --max-time 0.1 did it, unless a loaded machine
            // was slower than that: the test then failed on a missing blob).
            let queued = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--move", spool.incoming + "/body.bin"])
            XCTAssertEqual(queued.exitCode, 0, queued.stderr)
            let blob = try XCTUnwrap(spool.files(in: "pending").first { $0.hasSuffix(".blob") })
            old = try ageAccessTime(spool.path + "/pending/" + blob)
        }
        let result = try SpooldProcess.run(base)
        XCTAssertEqual(result.exitCode, 1, "parked in failed/ (the endpoint answers 500): \(result.stderr)")
        XCTAssertEqual(receiver.requests.first?.body.count, 70_000, "the body was read and sent")
        let blob = try XCTUnwrap(spool.files(in: "failed").first { $0.hasSuffix(".blob") }, spool.itemFiles.description)
        XCTAssertEqual(try accessTime(spool.path + "/failed/" + blob), old, "reading the body left its access time alone")
    }

    func testQueuedItem() throws { try forEachTransport { _ in try run(direct: false) } }
    func testSentStraightFromIncoming() throws { try forEachTransport { _ in try run(direct: true) } }
}
