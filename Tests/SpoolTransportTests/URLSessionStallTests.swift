import Foundation
import Glibc
import SpoolCore
import SpoolTransport
import Synchronization
import UploadReceiver
import XCTest

/// The stall watch: an attempt whose body stops being read while its connection is writable
/// and nothing is queued ends as a network error (retried) within seconds, not at the idle
/// timeout; one whose server stops reading is left alone. The stop is made here by holding the
/// body's reads, as a write event lost in libdispatch holds libcurl (docs/performance.md "Known limits").
final class URLSessionStallTests: XCTestCase {
    func testBodyReadsStop_withNothingQueued_theAttemptEndsAsStalled_soon() throws {
        let receiver = UploadReceiver(script: .always(201), keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let gate = DispatchSemaphore(value: 0)
        let reads = Mutex(0)
        let releasing = Mutex(false)
        addTeardownBlock {
            releasing.withLock { $0 = true }
            gate.signal()
        }
        let transport = URLSessionTransport(
            concurrency: 1, deadlineSeconds: 60, idleSeconds: 30, quietLimitSeconds: 1,
            bodyReadHook: {
                // Reads go on for a while, then stop, as libcurl stops when it waits for an event.
                guard reads.withLock({ n in n += 1; return n }) > 4, !releasing.withLock({ $0 }) else { return }
                _ = gate.wait(timeout: .now() + 30)
                gate.signal()
            })
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<UploadOutcome?>(nil)
        transport.start(try uploadRequest(to: receiver.baseURL + "/up/stalled", size: 8 << 20)) { result in
            outcome.withLock { $0 = result }
            ended.signal()
        }
        // Ended well before the idle timeout (30 s), and by the stall watch (its reason says so):
        // no tighter bound, which a loaded machine would break.
        XCTAssertEqual(ended.wait(timeout: .now() + 25), .success, "still waiting: the idle timeout (30 s) would end it")
        let result = try XCTUnwrap(outcome.withLock { $0 })
        XCTAssertEqual(result.class, .retryable, "\(result)")
        XCTAssertTrue(result.errorText?.contains("stalled") ?? false, "\(result)")
    }

    /// With `--limit-rate` a body read waits at the gate for its bytes, and a body that waits its
    /// turn is not stalled: at a byte a second, the second byte of a 2-byte body is read a second
    /// after the first, past the 0.5 s limit, and within it plus a turn.
    func testRateLimitedBody_waitingItsTurn_isNotAStall() throws {
        let receiver = UploadReceiver(script: .always(201), keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let transport = URLSessionTransport(
            concurrency: 1, deadlineSeconds: 30, idleSeconds: 30, quietLimitSeconds: 0.5, rate: BodyRateGate(bytesPerSecond: 1))
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<UploadOutcome?>(nil)
        transport.start(try uploadRequest(to: receiver.baseURL + "/up/turn", size: 2)) { result in
            outcome.withLock { $0 = result }
            ended.signal()
        }
        XCTAssertEqual(ended.wait(timeout: .now() + 20), .success)
        let result = try XCTUnwrap(outcome.withLock { $0 })
        XCTAssertEqual(result.httpStatus, 201, "\(result)")
    }

    /// A server that stops reading leaves bytes in the send queue: not a stall; the deadline ends it.
    func testServerStopsReading_isNotAStall_theDeadlineEndsIt() throws {
        // A listener that never accepts: the kernel takes the connection and its first bytes,
        // then the window closes and the client's send queue fills.
        let (listener, port) = try LoopbackSocket.open(listening: 4)
        addTeardownBlock { close(listener) }

        let transport = URLSessionTransport(concurrency: 1, deadlineSeconds: 2, idleSeconds: 30, quietLimitSeconds: 1)
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<UploadOutcome?>(nil)
        transport.start(try uploadRequest(to: "http://127.0.0.1:\(port)/up/slow", size: 64 << 20)) { result in
            outcome.withLock { $0 = result }
            ended.signal()
        }
        XCTAssertEqual(ended.wait(timeout: .now() + 20), .success)
        let result = try XCTUnwrap(outcome.withLock { $0 })
        XCTAssertFalse(result.errorText?.contains("stalled") ?? false, "a slow reader was taken for a stall: \(result)")
        XCTAssertTrue(result.errorText?.contains("deadline") ?? false, "\(result)")
    }
}
