import Foundation
import SpoolCore
import SpoolTransport
import UploadReceiver
import XCTest

/// `URLSessionTransport` ends an attempt (deadline, cancel) without waiting for FoundationNetworking,
/// whose `cancel` runs on a work queue that a flooding connection can keep busy. Here the work
/// queue is stuck for real: one attempt's completion holds the delegate queue, so the session's
/// thread blocks on the bounded delegate queue while another attempt's endless answer arrives.
final class URLSessionEndingTests: XCTestCase {
    private struct Wedged {
        let transport: URLSessionTransport
        let endless: UploadRequest
        /// Lets the held completion return, so the session runs again.
        let release: DispatchSemaphore
    }

    /// Starts a quick upload whose completion does not return until `release`, then builds (not
    /// starts) an upload that will be answered endlessly.
    private func wedgedSession(deadlineSeconds: Double) throws -> Wedged {
        let receiver = UploadReceiver(script: ResponseScript { request in
            request.target.hasSuffix("/endless") ? ScriptedResponse(status: 200, fault: .endlessAnswer) : .status(201)
        }, keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        let transport = URLSessionTransport(concurrency: 4, deadlineSeconds: deadlineSeconds, idleSeconds: 30)
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        addTeardownBlock { release.signal() }
        transport.start(try uploadRequest(to: receiver.baseURL + "/quick")) { _ in
            held.signal()
            _ = release.wait(timeout: .now() + 20)
        }
        XCTAssertEqual(held.wait(timeout: .now() + 10), .success, "the quick upload was answered")
        return Wedged(transport: transport, endless: try uploadRequest(to: receiver.baseURL + "/endless"), release: release)
    }

    /// The endless attempt's outcome, if it arrives within `seconds`.
    private func outcome(of wedged: Wedged, within seconds: Double, after act: () -> Void = {}) -> UploadOutcome? {
        let arrived = DispatchSemaphore(value: 0)
        let box = OutcomeBox()
        wedged.transport.start(wedged.endless) { outcome in
            box.set(outcome)
            arrived.signal()
        }
        act()
        let result = arrived.wait(timeout: .now() + seconds) == .success ? box.value : nil
        wedged.release.signal()
        return result
    }

    func testDeadline_endsTheAttempt_whileFoundationIsStuck() throws {
        let wedged = try wedgedSession(deadlineSeconds: 1)
        let started = Date()
        let outcome = try XCTUnwrap(self.outcome(of: wedged, within: 6), "no outcome 6 s after a 1 s deadline")
        XCTAssertLessThan(Date().timeIntervalSince(started), 4)
        XCTAssertTrue(outcome.errorText?.contains("deadline") == true, "\(outcome)")
    }

    func testCancelAll_endsTheAttempt_whileFoundationIsStuck() throws {
        let wedged = try wedgedSession(deadlineSeconds: 60)
        let outcome = try XCTUnwrap(self.outcome(of: wedged, within: 6) {
            // Until the answer has filled the delegate queue's room and the session's thread waits.
            Thread.sleep(forTimeInterval: 0.5)
            wedged.transport.cancelAll()
        }, "cancelAll did not end the attempt")
        XCTAssertTrue(outcome.isCancelled, "\(outcome)")
    }
}

private final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: UploadOutcome?
    func set(_ outcome: UploadOutcome) { lock.withLock { stored = outcome } }
    var value: UploadOutcome? { lock.withLock { stored } }
}
