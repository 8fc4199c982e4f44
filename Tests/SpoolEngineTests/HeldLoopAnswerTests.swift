import Dispatch
import Foundation
import Glibc
import SpoolCore
import SpoolCurlTransport
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport
import Synchronization
import UploadReceiver
import XCTest

/// An answer that arrives while the engine's loop is held in a slow sync is the upload's
/// outcome, with either transport, however far past the idle timeout the loop comes back: the
/// transports read answers on threads of their own and post the outcome, and an answer that
/// arrived whole is the outcome whatever the connection does next (`HTTPAttempt`). What held
/// the loop here is a sync it still makes itself (taking a file in from incoming/); an index
/// fsync held 60 s there once turned four answered uploads into idle timeouts, sent twice.
final class HeldLoopAnswerTests: XCTestCase {
    private static let idleSeconds = 1.0

    /// Each upload's outcome as the engine judged it.
    private final class Outcomes: EngineObserver, @unchecked Sendable {
        var byItem: [ItemID: [UploadOutcome]] = [:]
        func uploadFinished(_ id: ItemID, outcome: UploadOutcome, size: Int64, seconds: Double, stillQueued: Bool) {
            byItem[id, default: []].append(outcome)
        }
    }

    func testAnswerArrivingWhileTheLoopIsHeldInASync_isTheOutcome_withEitherTransport() throws {
        let receiver = UploadReceiver(script: ResponseScript { _ in
            usleep(300_000)  // the answer comes once the loop is held
            return .status(201)
        }, keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let transports: [(String, () -> any UploadTransport)] = [
            ("urlsession", { URLSessionTransport(concurrency: 2, deadlineSeconds: 60, idleSeconds: Self.idleSeconds) }),
            ("curl", { CurlTransport(deadlineSeconds: 60, idleSeconds: Self.idleSeconds, connections: 2) }),
        ]
        for (name, make) in transports {
            let transport = make()
            defer { transport.shutdown() }
            try run(name, transport: transport, receiver: receiver)
        }
    }

    private func run(_ name: String, transport: any UploadTransport, receiver: UploadReceiver) throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        // One item queued before the start, due a millisecond after it.
        var items = TestItems()
        let plain = try temp.open()
        try temp.write(Array("queued".utf8), to: "queued.bin", in: .incoming)
        let queued = items.incoming("queued.bin")
        _ = try plain.add([queued])

        let fs = RecordingFileSystem()
        let clock = ManualClock()
        let events = try ScriptedEventSource()
        var configuration = EngineConfiguration(
            url: URLTemplate(receiver.baseURL + "/up/\(name)/"), concurrency: 1, policy: RetryPolicy(), settleSeconds: 0)
        configuration.directUploads = false
        let engine = try Engine(
            spool: temp.open(fs: fs), transport: transport, clock: clock, configuration: configuration,
            log: EventLog(minimumLevel: .error, clock: { clock.now() }), processTag: 7, events: events, runPass: { $0() },
            syncs: .loop)
        let outcomes = Outcomes()
        engine.observers.add(outcomes)
        try engine.start()
        clock.advance(bySeconds: 1)
        _ = try engine.step(now: clock.now(), events: events.takeEvents())
        XCTAssertEqual(engine.requestsStarted, 1, name)

        // A file to take in: the step that takes it waits in its index fsync, past the idle
        // timeout, while the upload's answer arrives.
        try temp.write(Array("dropped".utf8), to: "dropped.bin", in: .incoming)
        events.feed(InotifyWatcher.movedTo, name: "dropped.bin")
        let gate = DispatchSemaphore(value: 0), entered = DispatchSemaphore(value: 0)
        fs.hold(.sync, until: gate, entered: entered) { $0.name == SpoolFolder.indexFileName }
        let stepped = DispatchSemaphore(value: 0)
        let thrown = Mutex<String?>(nil)
        let held = events.takeEvents()
        let now = clock.now()
        // The engine is stepped from another thread while this one watches it; nothing else touches it meanwhile.
        nonisolated(unsafe) let loop = engine
        DispatchQueue.global().async {
            do { _ = try loop.step(now: now, events: held) } catch { thrown.withLock { $0 = "\(error)" } }
            stepped.signal()
        }
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success, "\(name): the loop is in the held fsync")
        let deadline = Date().addingTimeInterval(20)
        while !events.hasEvents && Date() < deadline { usleep(10_000) }
        XCTAssertTrue(events.hasEvents, "\(name): the answer arrived while the loop was held")
        usleep(UInt32(2 * Self.idleSeconds * 1_000_000))  // the loop stays held past the idle timeout
        gate.signal()
        XCTAssertEqual(stepped.wait(timeout: .now() + 10), .success, name)
        XCTAssertNil(thrown.withLock { $0 }, name)

        // The next step reads the outcome: the answer, not a timeout.
        _ = try engine.step(now: clock.now(), events: events.takeEvents())
        let outcome = outcomes.byItem[queued.id]
        XCTAssertEqual(outcome?.map(\.httpStatus), [201], "\(name): \(String(describing: outcome))")
        XCTAssertEqual(receiver.requests.filter { $0.target.hasPrefix("/up/\(name)/") && $0.target.contains("queued.bin") }.count, 1, "\(name): sent once")
        XCTAssertEqual(temp.names(in: .pending).filter { $0.contains("queued.bin") }, [], "\(name): not to be sent again")
    }
}
