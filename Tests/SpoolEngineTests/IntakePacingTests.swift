import SpoolCore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// How many files a round takes in from incoming/: in step with the uploads while the endpoint
/// answers (a big drop starts uploading at once), everything during an outage. With direct
/// uploads off: `DirectUploadTests` covers how they pace a drop.
final class IntakePacingTests: EngineTestCase {
    /// Renames `count` files into incoming/ (settled, announced by inotify).
    private func renameIn(_ count: Int, into embedded: EmbeddedEngine, from first: Int = 0) throws {
        for i in first..<(first + count) {
            let name = "f\(1000 + i).txt"
            try drop(name)
            embedded.events.feed(InotifyWatcher.movedTo, name: name)
        }
    }

    func testBigDrop_startsUploadingAfterOneBatch_andTheRestFollowsTheUploads() throws {
        let embedded = try start(configuration(concurrency: 2, direct: false))
        try renameIn(100, into: embedded)

        try embedded.advanceTime(by: 0)
        XCTAssertEqual(embedded.transport.inFlight, 2, "uploads start in the round of the drop")
        XCTAssertEqual(temp.names(in: .incoming).count, 100 - 36, "one batch: 2 x concurrency ready + 32 ahead")
        XCTAssertEqual(temp.names(in: .pending).count, 2 * (36 - 2))

        var answered = 0
        while embedded.transport.inFlight > 0 {
            try embedded.transport.answerNext(.status(201))
            answered += 1
            try embedded.advanceTime(by: 0)
            XCTAssertLessThanOrEqual(temp.names(in: .pending).count / 2, 36, "never more than a batch ahead")
        }
        XCTAssertEqual(answered, 100)
        XCTAssertEqual(temp.names(in: .incoming), [])
        XCTAssertEqual(temp.names(in: .pending), [])
        let uploaded = embedded.transport.started.map { $0.request.url.split(separator: "/").last.map(String.init) ?? "" }
        XCTAssertEqual(uploaded, (0..<100).map { "f\(1000 + $0).txt" }, "taken and uploaded in the order they arrived")
    }

    func testSteadyFlow_writesTheJsonsOfUploadedItemsAgain_insteadOfCreatingFiles() throws {
        let embedded = try start(configuration(concurrency: 2, direct: false))
        try renameIn(60, into: embedded)
        try embedded.advanceTime(by: 0)
        // A json is created by opening its own name in tmp/; a spare is opened as `spare.N`.
        func jsonsCreated() -> Int { fs.calls(.open).filter { $0.directory == "tmp" && $0.name.hasSuffix(".json") }.count }
        let createdAtFirst = jsonsCreated()
        XCTAssertEqual(createdAtFirst, 36)

        var spares = 0
        while embedded.transport.inFlight > 0 {
            try embedded.transport.answerNext(.status(201))
            try embedded.advanceTime(by: 0)
            spares = max(spares, temp.names(in: .tmp).filter { $0.hasPrefix("spare.") }.count)
        }
        XCTAssertGreaterThan(spares, 0, "spares wait in tmp/ while items flow")
        let created = jsonsCreated() - createdAtFirst
        XCTAssertEqual(temp.names(in: .incoming), [])
        XCTAssertLessThan(created, 10, "the 24 files taken in after the first batch reuse the jsons of uploaded items")
        XCTAssertEqual(temp.names(in: .tmp), [], "an idle daemon leaves tmp/ empty")
    }

    func testOutage_takesEveryAnnouncedFileIn() throws {
        try drop("first.txt")
        let embedded = try start(configuration(concurrency: 2, direct: false))
        embedded.transport.autoAnswer = .failed(.connectionRefused)
        try embedded.transport.answerNext(.failed(.connectionRefused))
        try embedded.advanceTime(by: 0)

        try renameIn(100, into: embedded)
        try embedded.advanceTime(by: 0.5)  // before the first probe
        XCTAssertEqual(temp.names(in: .incoming), [], "nothing to keep pace with: all taken in")
        XCTAssertEqual(temp.names(in: .pending).count, 2 * 101)
    }
}
