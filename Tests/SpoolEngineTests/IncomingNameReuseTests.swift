import Glibc
import SpoolCore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A name reported as unusable in incoming/ is not a name banned for good: a file its producer
/// took back before it was taken, or a FIFO replaced by a regular file, leaves the name free for
/// the next file, and an unreadable file is tried again once it changed. Before, the name stayed on the list of reported names, and every later file
/// under it waited in incoming/ without a word.
final class IncomingNameReuseTests: EngineTestCase {
    private func uploadedNames(_ embedded: EmbeddedEngine) -> [String] {
        embedded.transport.started.map { $0.request.url.split(separator: "/").last.map(String.init) ?? "" }
    }

    func testFileTakenBackBeforeIntake_thenDroppedAgain_isTaken() throws {
        let embedded = try start(configuration(settle: 0))
        embedded.transport.autoAnswer = .status(201)
        try drop("x.bin")
        embedded.events.feed(InotifyWatcher.movedTo, name: "x.bin")
        XCTAssertEqual(unlink(temp.path(.incoming, "x.bin")), 0)  // taken back before the step
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(uploadedNames(embedded), [])

        try drop("x.bin")
        embedded.events.feed(InotifyWatcher.movedTo, name: "x.bin")
        try embedded.advanceTime(by: 0)

        XCTAssertEqual(uploadedNames(embedded), ["x.bin"])
        XCTAssertEqual(temp.names(in: .incoming), [])
    }

    func testFIFOReplacedByAFileRenamedOverIt_isTaken() throws {
        XCTAssertEqual(mkfifo(temp.path(.incoming, "pipe.dat"), 0o600), 0)
        let embedded = try start(configuration(settle: 0))
        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(temp.names(in: .incoming), ["pipe.dat"], "a FIFO is left alone")

        try drop(".pipe.dat.tmp")
        XCTAssertEqual(rename(temp.path(.incoming, ".pipe.dat.tmp"), temp.path(.incoming, "pipe.dat")), 0)
        embedded.events.feed(InotifyWatcher.movedTo, name: "pipe.dat")
        try embedded.advanceTime(by: 0)

        XCTAssertEqual(uploadedNames(embedded), ["pipe.dat"])
        XCTAssertEqual(temp.names(in: .incoming), [])
    }

    /// A file that could not be opened is left alone, and not tried at every rescan; once it
    /// changes (here its mode, as an operator's chmod would), the next rescan takes it.
    func testUnreadableFile_isTakenAtTheRescanAfterItChanged_notBefore() throws {
        try drop("locked.bin")
        // Both opens of the first look fail: the direct upload's, then the intake's.
        for _ in 1...2 { fs.failCall(.open, errno: EACCES) { $0.name == "locked.bin" } }
        let embedded = try start(configuration(settle: 0))
        embedded.transport.autoAnswer = .status(201)
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(uploadedNames(embedded), [])
        XCTAssertEqual(temp.names(in: .incoming), ["locked.bin"], "left where it was")

        try embedded.advanceTime(by: 61)
        XCTAssertEqual(uploadedNames(embedded), [], "unchanged: not tried again")

        XCTAssertEqual(chmod(temp.path(.incoming, "locked.bin"), 0o640), 0)
        try embedded.advanceTime(by: 61)
        XCTAssertEqual(uploadedNames(embedded), ["locked.bin"])
        XCTAssertEqual(temp.names(in: .incoming), [])
    }
}
