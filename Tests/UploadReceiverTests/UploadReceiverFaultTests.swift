import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UploadReceiver
import XCTest

/// Scripted faults break the exchange the way a failing server or network would.
final class UploadReceiverFaultTests: XCTestCase {
    func testCloseBeforeBodyFailsTheClientWithoutReadingTheBody() throws {
        let receiver = UploadReceiver(script: .always(.faulted(.closeBeforeBody)))
        try receiver.start()
        defer { receiver.stop() }

        let result = URLSessionClient.upload(receiver.baseURL + "/f", body: Data(TestBytes.pattern(100_000)))

        XCTAssertNotNil(result.error)
        XCTAssertNil(result.status)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        let request = receiver.requests.first
        XCTAssertEqual(request?.bodyLength, 0)
        XCTAssertEqual(request?.body, [])
        XCTAssertEqual(request?.bodyComplete, false)
        XCTAssertNil(request?.answeredStatus)
    }

    func testCloseBeforeBodySendsNo100Continue() throws {
        let receiver = UploadReceiver(script: .always(.faulted(.closeBeforeBody)))
        try receiver.start()
        defer { receiver.stop() }
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("PUT /f HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n")

        XCTAssertTrue(connection.isClosedByPeer())
    }

    func testCloseMidBodyFailsTheClientAfterAboutHalf() throws {
        let receiver = UploadReceiver(script: .always(.faulted(.closeMidBody)))
        try receiver.start()
        defer { receiver.stop() }
        let body = TestBytes.pattern(3 * 1024 * 1024)

        let result = URLSessionClient.upload(receiver.baseURL + "/f", body: Data(body))

        XCTAssertNotNil(result.error)
        XCTAssertNil(result.status)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        let request = receiver.requests.first
        XCTAssertEqual(request?.bodyLength, Int64(body.count / 2))
        XCTAssertTrue(request?.body == Array(body[0..<(body.count / 2)]))
        XCTAssertEqual(request?.bodyComplete, false)
        XCTAssertNil(request?.answeredStatus)
    }

    func testCloseMidBodyOnChunkedBodyReadsHalfTheFirstChunk() throws {
        let receiver = UploadReceiver(script: .always(.faulted(.closeMidBody)))
        try receiver.start()
        defer { receiver.stop() }
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("PUT /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\nabcdefgh\r\n")

        XCTAssertTrue(connection.isClosedByPeer())
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        XCTAssertEqual(receiver.requests.first?.body, Array("abcd".utf8))
    }

    func testNeverAnswerTimesTheClientOutAndStopReturnsPromptly() throws {
        let receiver = UploadReceiver(script: .always(.faulted(.neverAnswer)))
        try receiver.start()

        let started = Date()
        let result = URLSessionClient.upload(receiver.baseURL + "/f", body: Data(TestBytes.pattern(10_000)), timeout: 1)

        XCTAssertEqual((result.error as? URLError)?.code, .timedOut)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        XCTAssertEqual(receiver.requests.first?.bodyComplete, true)
        XCTAssertEqual(receiver.requests.first?.bodyLength, 10_000)

        let stopping = Date()
        receiver.stop()
        XCTAssertLessThan(Date().timeIntervalSince(stopping), 1)
    }

    func testStopEndsAHeldConnectionTheClientStillWaitsOn() throws {
        let receiver = UploadReceiver(script: .always(.faulted(.neverAnswer)))
        try receiver.start()
        let connection = try RawHTTPConnection(port: receiver.port)
        try connection.send("PUT /f HTTP/1.1\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))

        let stopping = Date()
        receiver.stop()

        XCTAssertLessThan(Date().timeIntervalSince(stopping), 1)
        XCTAssertTrue(connection.isClosedByPeer())
    }

    func testFaultThenSuccessOnRetry() throws {
        let receiver = UploadReceiver(script: .perKey([.faulted(.closeMidBody)], then: .status(201)))
        try receiver.start()
        defer { receiver.stop() }
        let body = Data(TestBytes.pattern(400_000))

        let first = URLSessionClient.upload(receiver.baseURL + "/r", body: body, headers: ["Idempotency-Key": "r1"])
        let second = URLSessionClient.upload(receiver.baseURL + "/r", body: body, headers: ["Idempotency-Key": "r1"])

        XCTAssertNotNil(first.error)
        XCTAssertEqual(second.status, 201)
        XCTAssertEqual(receiver.requests.first?.bodyComplete, false)
        XCTAssertEqual(receiver.requests.last?.bodyComplete, true)
    }
}
