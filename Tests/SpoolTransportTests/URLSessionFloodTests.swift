import Foundation
import SpoolCore
import SpoolTransport
import UploadReceiver
import Synchronization
import XCTest

/// An answer cut after 1 MiB ends its connection at once, though the task's `cancel` waits: here
/// the queue spoold tells tasks to cancel on is held, as FoundationNetworking's busy work queue
/// holds it under a flood for seconds (docs/performance.md "Known limits"). The flooded connection is found
/// by its traffic and aborted (reset), so the server stops sending and FoundationNetworking stops
/// buffering.
final class URLSessionFloodTests: XCTestCase {
    func testCutAnswer_itsConnectionEnds_whileTheCancelWaits() throws {
        let receiver = UploadReceiver(script: ResponseScript { request in
            request.target.hasSuffix("/endless") ? ScriptedResponse(status: 200, fault: .endlessAnswer) : .status(201)
        }, keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let held = DispatchQueue(label: "held-cancels")
        held.suspend()
        addTeardownBlock { held.resume() }
        let transport = URLSessionTransport(concurrency: 2, deadlineSeconds: 60, idleSeconds: 30, cancelQueue: held)

        let answered = DispatchSemaphore(value: 0)
        transport.start(try uploadRequest(to: receiver.baseURL + "/endless")) { _ in answered.signal() }
        XCTAssertEqual(answered.wait(timeout: .now() + 10), .success, "the cut answer is the outcome")

        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5), "the flooded connection was not closed")
        // Other connections are left alone: the next upload goes through.
        let next = DispatchSemaphore(value: 0)
        let status = Mutex<Int?>(nil)
        transport.start(try uploadRequest(to: receiver.baseURL + "/quick")) { outcome in
            status.withLock { $0 = outcome.httpStatus }
            next.signal()
        }
        XCTAssertEqual(next.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(status.withLock { $0 }, 201)
    }

    /// A redirect whose body never ends: FoundationNetworking collects a 3xx body whole before it
    /// asks about the redirect, so the cut never sees it. The sweeper's watch of bytes received
    /// and never handed over aborts the connection within seconds; the attempt ends with a network
    /// error (retried), long before its 120 s deadline.
    func testRedirectWithAnEndlessBody_isAbortedWithinSeconds_notAtTheDeadline() throws {
        let receiver = UploadReceiver(script: ResponseScript { _ in
            ScriptedResponse(status: 307, headers: [("Location", "/elsewhere")], fault: .endlessAnswer)
        }, keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let transport = URLSessionTransport(concurrency: 2, deadlineSeconds: 120, idleSeconds: 60, watchWindowSeconds: 0.3)
        let started = Date()
        let answered = DispatchSemaphore(value: 0)
        let outcome = Mutex<UploadOutcome?>(nil)
        transport.start(try uploadRequest(to: receiver.baseURL + "/up/flood")) { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        XCTAssertEqual(answered.wait(timeout: .now() + 30), .success, "no outcome 30 s into an endless redirect body")
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "ended by the watch (a few seconds), not the 120 s deadline")
        let result = try XCTUnwrap(outcome.withLock { $0 })
        XCTAssertNil(result.httpStatus, "\(result)")
        XCTAssertEqual(transport.connectionsResetForUndeliveredBytes, 1)
    }

    /// Many fast answers with bodies, all handed over: no connection is taken for a flood.
    func testManyAnswersWithBodies_areNeverAborted() throws {
        let answer = [UInt8](repeating: 0x61, count: 256 << 10)
        let receiver = UploadReceiver(script: .always(ScriptedResponse(status: 201, body: answer)), keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let transport = URLSessionTransport(concurrency: 4, deadlineSeconds: 60, idleSeconds: 30, watchWindowSeconds: 0.3)
        let statuses = Mutex<[Int?]>([])
        // Batches for at least five of the watch's windows, each far above its rate.
        let started = Date()
        var batches = 0
        while Date().timeIntervalSince(started) < 2 {
            let done = DispatchGroup()
            for n in 0..<40 {
                done.enter()
                transport.start(try uploadRequest(to: receiver.baseURL + "/up/\(batches)-\(n)")) { result in
                    statuses.withLock { $0.append(result.httpStatus) }
                    done.leave()
                }
            }
            XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
            batches += 1
        }
        let failed = statuses.withLock { $0.filter { $0 != 201 } }
        XCTAssertEqual(failed.count, 0, "\(failed.count) of \(batches * 40) answered uploads were aborted")
        // An idle connection reset between two requests costs no upload (libcurl reconnects):
        // counted, not inferred.
        XCTAssertEqual(transport.connectionsResetForUndeliveredBytes, 0, "a connection carrying answers was taken for a flood")
        // Nothing was sent twice: each upload reached the server once (no fault, so no resend by
        // libcurl under FoundationNetworking either).
        let targets = receiver.requests.map(\.target)
        XCTAssertEqual(targets.count, batches * 40)
        XCTAssertEqual(targets.count - Set(targets).count, 0, "uploads that reached the server twice without a fault")
    }
}
