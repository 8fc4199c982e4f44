import SpoolCore
import SpoolEngine
import SpoolSystem
import SpoolTestSupport
import XCTest

/// One list of observers hears everything the engine tells: queue changes, each attempt's end, and
/// each durable final outcome (what `--on-success` and `--on-failure` hooks run on).
final class EngineObserverTests: EngineTestCase {
    private final class Recorder: EngineObserver {
        var heard: [String] = []
        func itemQueued(_ id: ItemID, at location: ItemLocation) { heard.append("queued") }
        func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
            heard.append("attempt \(outcome.httpStatus ?? 0)\(stillQueued ? " retry" : "")")
        }
        func itemFinished(_ event: ItemOutcomeEvent) { heard.append("\(event.kind) \(event.originalName) \(event.httpStatus ?? 0)") }
    }

    func testOneList_hearsAttemptsAndDurableOutcomes_inOrder() throws {
        try drop("ok.txt")
        let recorder = Recorder()
        let embedded = try start(configuration(), observers: [recorder])
        try embedded.transport.answerNext(.status(503))
        try embedded.advanceTime(by: 5)
        try embedded.transport.answerNext(.status(201))
        try embedded.advanceTime(by: 0)
        try drop("bad.txt")
        embedded.events.feed(InotifyWatcher.closeWrite, name: "bad.txt")
        try embedded.advanceTime(by: 0)
        try embedded.transport.answerNext(.status(400))
        try embedded.advanceTime(by: 0)
        XCTAssertEqual(recorder.heard, [
            "queued", "attempt 503 retry", "attempt 201", "uploaded ok.txt 201",
            "queued", "attempt 400", "failed bad.txt 400",
        ])
    }
}
