import Dispatch
import Foundation
import Synchronization
import UploadReceiver
import XCTest

/// `spoold enqueue` racing a daemon's start-up recovery (issue 9): recovery used to remove the
/// files enqueue was staging in tmp/ (enqueue then exited 3 although with --move the item was
/// added and the source consumed) and to rebuild a half-renamed item's json without its headers.
final class EnqueueRaceTests: XCTestCase {
    private struct Call {
        var tag: String
        var sources: [String]
        var payloads: [[UInt8]]
        var result: SpooldProcess.Result
    }

    func testEnqueueMove_racingDaemonStarts_answersTheTruth_andEveryPrintedItemArrivesWithItsHeaders() throws {
        let spool = try TestSpool(self)
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let drain = ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"]
        XCTAssertEqual(try SpooldProcess.run(drain).exitCode, 0, "the spool exists before the race")

        let producers = 4
        let callsEach = 8
        let filesEach = 6
        let calls = Collected<Call>()
        let drains = Collected<SpooldProcess.Result>()
        let producing = DispatchGroup()
        for _ in 0..<producers { producing.enter() }
        // Two threads run start-up recovery back to back while the others enqueue, until every
        // producer is done (bounded): one starts daemons that SIGKILL themselves once their
        // recovery has compacted the index (so there are many starts), one runs `check --repair`
        // (the same recovery; exit 4 while a daemon holds the lock).
        let race: @Sendable (Int) -> Void = { k in
            if k >= producers {
                var n = 0
                while producing.wait(timeout: .now()) == .timedOut, n < 300 {
                    if k == producers {
                        if let result = try? SpooldProcess.run(drain, environment: ["SPOOLD_CRASH_AT": "compact.after-rename"]) {
                            drains.append(result)
                        }
                    } else {
                        _ = try? SpooldProcess.run(["check", "--repair", "--spool", spool.path])
                    }
                    n += 1
                }
                return
            }
            defer { producing.leave() }
            for c in 0..<callsEach {
                // Interleave with the daemon starts however fast this machine is: call c waits
                // (5 s at most) until c/2 daemons have recovered and been killed at their crash
                // point, so the last calls race the third start at least.
                let gate = Date().addingTimeInterval(5)
                while drains.values.filter({ $0.signal == SIGKILL }).count < c / 2, Date() < gate { usleep(2_000) }
                let tag = "\(k)-\(c)"
                var sources: [String] = []
                var payloads: [[UInt8]] = []
                for f in 0..<filesEach {
                    let bytes = payload(300 + 17 * c + f, seed: UInt64(k * 1000 + c * 10 + f))
                    let path = spool.root + "/src-\(tag)-\(f).bin"
                    try? Data(bytes).write(to: URL(fileURLWithPath: path))
                    sources.append(path)
                    payloads.append(bytes)
                }
                guard let result = try? SpooldProcess.run(
                    ["enqueue", "--move", "--spool", spool.path, "--header", "X-Call: \(tag)"] + sources)
                else { continue }
                calls.append(Call(tag: tag, sources: sources, payloads: payloads, result: result))
            }
        }
        // Threads of their own: concurrentPerform would run only as many at once as there are cores.
        let everyone = DispatchGroup()
        for k in 0..<(producers + 2) {
            everyone.enter()
            Thread.detachNewThread {
                race(k)
                everyone.leave()
            }
        }
        XCTAssertEqual(everyone.wait(timeout: .now() + 120), .success)

        XCTAssertEqual(calls.values.count, producers * callsEach)
        let recovered = drains.values.filter { $0.signal == SIGKILL }.count
        XCTAssertGreaterThanOrEqual(recovered, 3, "daemons started and recovered during the race")
        for result in drains.values {
            XCTAssertTrue(result.signal == SIGKILL || result.exitCode == 4,
                          "a daemon start ends at its crash point, or finds `check --repair` holding the lock: \(result.stderr)")
        }
        // The answer is the truth: exit 0 with one id per file and every source consumed.
        for call in calls.values {
            XCTAssertEqual(call.result.exitCode, 0, "enqueue \(call.tag): \(call.result.stderr)")
            XCTAssertEqual(call.result.lines.count, call.sources.count, "enqueue \(call.tag) printed one id per file")
            for source in call.sources {
                XCTAssertFalse(FileManager.default.fileExists(atPath: source), "\(source) was moved into the spool")
            }
        }

        let final = try SpooldProcess.run(drain)
        XCTAssertEqual(final.exitCode, 0, final.stderr)
        // Every printed id reached the receiver with enqueue's header and its bytes.
        var received: [String: ReceivedRequest] = [:]
        for request in receiver.requests where (request.answeredStatus ?? 0) / 100 == 2 {
            if let key = request.header("Idempotency-Key") { received[key] = request }
        }
        for call in calls.values {
            for (id, bytes) in zip(call.result.lines, call.payloads) {
                guard let request = received[id] else {
                    XCTFail("\(id) (enqueue \(call.tag)) never reached the receiver")
                    continue
                }
                XCTAssertEqual(request.header("X-Call"), call.tag, "\(id) kept enqueue's header")
                XCTAssertEqual(request.body, bytes, "\(id) has its file's bytes")
            }
        }
        XCTAssertEqual(spool.itemFiles, [])
        XCTAssertEqual(try SpooldProcess.run(["check", "--spool", spool.path]).exitCode, 0)
    }
}

/// What the racing threads hand back to the test.
private final class Collected<Element: Sendable>: Sendable {
    private let stored = Mutex<[Element]>([])
    func append(_ element: Element) { stored.withLock { $0.append(element) } }
    var values: [Element] { stored.withLock { $0 } }
}
