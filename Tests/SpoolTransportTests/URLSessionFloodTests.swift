import Foundation
import SpoolCore
import SpoolTransport
import UploadReceiver
import Synchronization
import XCTest

/// An answer cut after 1 MiB ends its connection at once, though the task's `cancel` waits: here
/// the queue spoold tells tasks to cancel on is held, as FoundationNetworking's busy work queue
/// holds it under a flood for seconds (README "Known limits"). The flooded connection is found
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
}
