import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UploadReceiver
import XCTest

/// Starting, waiting, observing and stopping.
final class UploadReceiverLifecycleTests: XCTestCase {
    func testWaitForRequestsTimesOutWhenTooFewArrive() throws {
        let receiver = UploadReceiver()
        try receiver.start()
        defer { receiver.stop() }
        _ = URLSessionClient.upload(receiver.baseURL + "/one", body: Data([1]))

        let started = Date()
        let reached = receiver.waitForRequests(count: 2, timeout: 0.3)
        let waited = Date().timeIntervalSince(started)

        XCTAssertFalse(reached)
        XCTAssertGreaterThanOrEqual(waited, 0.29)
        XCTAssertLessThan(waited, 3)
        XCTAssertEqual(receiver.handledRequestCount, 1)
    }

    func testWaitForRequestsWakesWhenTheCountIsReached() throws {
        let receiver = UploadReceiver()
        try receiver.start()
        defer { receiver.stop() }
        let url = receiver.baseURL + "/later"
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            _ = URLSessionClient.upload(url, body: Data([1]))
        }

        let started = Date()
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 10))
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testStartReportsPortAndBaseURL() throws {
        let receiver = UploadReceiver()
        XCTAssertEqual(receiver.port, 0)

        let port = try receiver.start()
        defer { receiver.stop() }

        XCTAssertGreaterThan(port, 0)
        XCTAssertEqual(receiver.port, port)
        XCTAssertEqual(receiver.baseURL, "http://127.0.0.1:\(port)")
    }

    func testStartTwiceThrowsAndStopIsIdempotent() throws {
        let receiver = UploadReceiver()
        try receiver.start()

        XCTAssertThrowsError(try receiver.start()) { XCTAssertEqual($0 as? ReceiverError, .alreadyStarted) }
        receiver.stop()
        receiver.stop()
        XCTAssertThrowsError(try receiver.start())
    }

    func testBindingABusyPortThrows() throws {
        let first = UploadReceiver()
        let port = try first.start()
        defer { first.stop() }

        XCTAssertThrowsError(try UploadReceiver().start(port: port))
    }

    func testStopClosesTheListenerAndIdleConnections() throws {
        let receiver = UploadReceiver()
        let port = try receiver.start()
        let idle = try RawHTTPConnection(port: port)

        receiver.stop()

        XCTAssertTrue(idle.isClosedByPeer())
        XCTAssertThrowsError(try RawHTTPConnection(port: port))
    }

    func testReleasingAReceiverStopsIt() throws {
        var receiver: UploadReceiver? = UploadReceiver()
        let port = try receiver!.start()
        XCTAssertNoThrow(try RawHTTPConnection(port: port))

        receiver = nil

        XCTAssertThrowsError(try RawHTTPConnection(port: port))
    }

    func testObserverSeesEachHandledRequest() throws {
        let receiver = UploadReceiver()
        let seen = LockedList<String>()
        receiver.setObserver { seen.append("\($0.target) \($0.answeredStatus ?? 0)") }
        try receiver.start()
        defer { receiver.stop() }

        _ = URLSessionClient.upload(receiver.baseURL + "/o1", body: Data([1]))
        _ = URLSessionClient.upload(receiver.baseURL + "/o2", body: Data([1]))

        XCTAssertTrue(receiver.waitForRequests(count: 2, timeout: 5))
        // Observers run on connection threads: no order is promised across connections.
        XCTAssertEqual(seen.values.sorted(), ["/o1 201", "/o2 201"])
    }
}
