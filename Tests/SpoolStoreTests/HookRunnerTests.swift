import Foundation
import Glibc
import SpoolCore
import SpoolTransport
@testable import SpoolEngine
import XCTest

/// The hook queue is bounded: what does not fit is dropped and counted, and the rest still runs.
final class HookRunnerTests: XCTestCase {
    func testFullQueue_dropsAndCounts_andQueuedHooksRunAfterTheBlockedOne() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        XCTAssertEqual(mkfifo(dir + "/ready", 0o600), 0)
        XCTAssertEqual(mkfifo(dir + "/gate", 0o600), 0)
        // The first hook says it started, then blocks until the test opens the gate.
        var commands = HookRunner.Commands(
            onSuccess: #"if [ "$SPOOLD_NAME" = first ]; then echo go > "\#(dir)/ready"; cat "\#(dir)/gate" > /dev/null; fi; echo "$SPOOLD_NAME" >> "\#(dir)/ran""#,
            onFailure: nil, timeoutSeconds: 30)
        commands.concurrency = 1
        commands.queueLimit = 2
        let runner = HookRunner(commands, spoolPath: dir, log: EventLog(minimumLevel: .error, clock: { SystemClock().now() }))
        var generator = ItemIDGenerator(processTag: 1)
        func event(_ name: String) -> ItemOutcomeEvent {
            ItemOutcomeEvent(kind: .uploaded, id: generator.next(at: Timestamp(millisecondsSinceEpoch: 0), originalName: name),
                             originalName: name, httpStatus: 201, size: 1)
        }

        runner.itemFinished(event("first"))
        let ready = open(dir + "/ready", O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(ready, 0)
        var fds = [pollfd(fd: ready, events: Int16(POLLIN), revents: 0)]
        XCTAssertEqual(poll(&fds, 1, 20_000), 1, "the first hook started")
        close(ready)
        for name in ["second", "third", "fourth", "fifth"] { runner.itemFinished(event(name)) }
        XCTAssertEqual(runner.droppedCount, 2, "one running, two waiting (the limit), two dropped")

        let gate = open(dir + "/gate", O_WRONLY)  // the first hook is reading it
        close(gate)
        runner.finish(waitingAtMostSeconds: 20)

        let ran = try String(contentsOfFile: dir + "/ran", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(ran, ["first", "second", "third"])
    }
}
