import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UploadReceiver
import XCTest

/// Connection handling: keep-alive, close, `Expect: 100-continue`, limits, concurrency.
final class UploadReceiverConnectionTests: ReceiverTestCase {
    func testKeepAliveServesTwoRequestsOnOneConnection() throws {
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("PUT /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        let first = try connection.readResponse()
        try connection.send("PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nde")
        let second = try connection.readResponse()

        XCTAssertEqual([first.status, second.status], [201, 201])
        XCTAssertNil(first.header("Connection"))
        let requests = receiver.requests
        XCTAssertEqual(requests.map(\.target), ["/a", "/b"])
        XCTAssertEqual(requests.map(\.body), [Array("abc".utf8), Array("de".utf8)])
        XCTAssertEqual(requests[0].connectionIndex, requests[1].connectionIndex)
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        receiver.setScript(ResponseScript { .status(200, body: $0.target) })
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("GET /1 HTTP/1.1\r\n\r\nPUT /2 HTTP/1.1\r\nContent-Length: 1\r\n\r\nzGET /3 HTTP/1.1\r\n\r\n")

        XCTAssertEqual(try (0..<3).map { _ in String(decoding: try connection.readResponse().body, as: UTF8.self) }, ["/1", "/2", "/3"])
    }

    func testConnectionCloseIsHonoured() throws {
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("PUT /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nz")
        let response = try connection.readResponse()

        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.header("Connection"), "close")
        XCTAssertTrue(connection.isClosedByPeer())
    }

    func testHTTP10ClosesAfterOneResponse() throws {
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("GET / HTTP/1.0\r\n\r\n")

        XCTAssertEqual(try connection.readResponse().status, 201)
        XCTAssertTrue(connection.isClosedByPeer())
    }

    func testExpectContinueGets100BeforeTheBodyIsSent() throws {
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("PUT /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        let interim = try connection.readResponse()
        try connection.send("body")
        let final = try connection.readResponse()

        XCTAssertEqual(interim.status, 100)
        XCTAssertEqual(interim.reason, "Continue")
        XCTAssertEqual(final.status, 201)
        XCTAssertEqual(receiver.requests.first?.body, Array("body".utf8))
    }

    func testOversizedHeadGets431AndIsNotLogged() throws {
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 70 * 1024) + "\r\n\r\n")
        let response = try connection.readResponse()

        XCTAssertEqual(response.status, 431)
        XCTAssertTrue(connection.isClosedByPeer())
        XCTAssertTrue(receiver.requests.isEmpty)
    }

    func testMalformedRequestsAreRefused() throws {
        for (wire, status) in [
            ("NONSENSE\r\n\r\n", 400),
            ("PUT / HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", 400),
            ("PUT / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            ("GET / HTTP/2.0\r\n\r\n", 505),
        ] {
            let connection = try RawHTTPConnection(port: receiver.port)
            try connection.send(wire)
            XCTAssertEqual(try connection.readResponse().status, status, wire)
        }
    }

    func testBrokenChunkedBodyGets400() throws {
        let connection = try RawHTTPConnection(port: receiver.port)

        try connection.send("PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")

        XCTAssertEqual(try connection.readResponse().status, 400)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        XCTAssertEqual(receiver.requests.first?.bodyComplete, false)
        XCTAssertEqual(receiver.requests.first?.answeredStatus, 400)
    }

    func testConcurrentUploadsAllArrive() {
        let count = 24
        let statuses = LockedList<Int>()
        let baseURL = receiver.baseURL
        DispatchQueue.concurrentPerform(iterations: count) { i in
            let result = URLSessionClient.upload(
                baseURL + "/c/\(i)", body: Data(TestBytes.pattern(50_000, seed: UInt32(i))))
            statuses.append(result.status ?? -1)
        }

        XCTAssertEqual(statuses.values, Array(repeating: 201, count: count))
        XCTAssertTrue(receiver.waitForRequests(count: count, timeout: 10))
        XCTAssertEqual(Set(receiver.requests.map(\.target)).count, count)
        XCTAssertEqual(receiver.requests.map(\.index), Array(0..<count))
        for request in receiver.requests {
            let i = UInt32(request.target.split(separator: "/").last!)!
            XCTAssertTrue(request.body == TestBytes.pattern(50_000, seed: i), request.target)
        }
    }
}
