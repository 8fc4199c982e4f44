import Glibc
import SpoolCore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A file that must be copied (a second hard link) into a spool without room for it fails its
/// batch with ENOSPC and pauses intake; the paused retries take one file at a time, and the one
/// that did not fit goes to the back of the line, so the files behind it still get in.
final class IntakeNoRoomTests: EngineTestCase {
    func testCopyThatDoesNotFit_goesToTheBackOfTheLine_theFileBehindItIsTaken() throws {
        try drop("a-big.bin")
        XCTAssertEqual(link(temp.path(.incoming, "a-big.bin"), temp.spoolPath + "/big-elsewhere"), 0)  // copied, not renamed
        try drop("b-small.bin")
        // Every write of the big file's copy into tmp/ finds the disk full.
        for _ in 0..<20 { fs.failCall(.write, errno: ENOSPC) { $0.directory == "tmp" && $0.name.contains("a-big") } }
        let spool = try temp.open(fs: fs)
        spool.takesHardLinkedFiles = true  // `--allow-hardlinks`
        let embedded = try EmbeddedEngine(spool: spool, configuration: configuration(settle: 0), clock: clock)
        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.started.count, 0, "the batch of both failed: intake paused")

        try embedded.advanceTime(by: 11)  // two retries, 5 s apart

        let uploaded = embedded.transport.started.map { $0.request.url.split(separator: "/").last.map(String.init) ?? "" }
        XCTAssertEqual(uploaded, ["b-small.bin"])
        XCTAssertEqual(temp.names(in: .incoming), ["a-big.bin"], "left where it was")
    }
}
