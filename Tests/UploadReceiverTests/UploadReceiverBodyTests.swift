import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UploadReceiver
import XCTest

/// Bodies arrive intact whatever their size and framing.
final class UploadReceiverBodyTests: ReceiverTestCase {
    private func assertPutArrives(_ body: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let result = URLSessionClient.upload(receiver.baseURL + "/up/item.bin", body: Data(body))
        XCTAssertNil(result.error, file: file, line: line)
        XCTAssertEqual(result.status, 201, file: file, line: line)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5), file: file, line: line)
        let request = receiver.requests.first
        XCTAssertEqual(request?.method, "PUT", file: file, line: line)
        XCTAssertEqual(request?.target, "/up/item.bin", file: file, line: line)
        XCTAssertEqual(request?.bodyComplete, true, file: file, line: line)
        XCTAssertEqual(request?.bodyLength, Int64(body.count), file: file, line: line)
        XCTAssertTrue(request?.body == body, "body differs", file: file, line: line)
        XCTAssertEqual(request?.answeredStatus, 201, file: file, line: line)
    }

    func testEmptyPutArrives() {
        assertPutArrives([])
    }

    func testOneBytePutArrives() {
        assertPutArrives([0x5A])
    }

    func testThreeMiBPutArrivesByteForByte() {
        assertPutArrives(TestBytes.pattern(3 * 1024 * 1024))
    }

    func testUploadFromFileArrivesByteForByte() throws {
        let body = TestBytes.pattern(1_500_000, seed: 7)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString).bin")
        try Data(body).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let result = URLSessionClient.upload(receiver.baseURL + "/up/file.bin", fromFile: file)

        XCTAssertNil(result.error)
        XCTAssertEqual(result.status, 201)
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        XCTAssertTrue(receiver.requests.first?.body == body)
    }

    /// A gzip body is inflated and checked as a server that decodes request bodies would: two
    /// members concatenated are one file; a body cut inside a member is refused (400); an empty
    /// one is no body.
    func testGzipBody_isInflated_membersConcatenated_aCutOneRefused() throws {
        let first: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0x00, 0x00, 0x99,
            0x56, 0xea, 0x11, 0x07, 0x00, 0x00, 0x00,
        ]
        let second: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xaf, 0xca, 0x2c, 0x50, 0x28, 0xcf, 0x2f, 0xca, 0x49,
            0xe1, 0x02, 0x00, 0xfe, 0x78, 0xd4, 0x0c, 0x0b, 0x00, 0x00, 0x00,
        ]
        func put(_ body: [UInt8]) throws -> Int {
            let connection = try RawHTTPConnection(port: receiver.port)
            try connection.send("PUT /up/g HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n")
            try connection.send(body)
            return try connection.readResponse().status
        }
        XCTAssertEqual(try put(first + second), 201)
        XCTAssertEqual(try put(first + second.dropLast(3)), 400)
        XCTAssertEqual(try put([]), 201)
        XCTAssertTrue(receiver.waitForRequests(count: 3, timeout: 5))
        let requests = receiver.requests
        XCTAssertEqual(requests.first.map { String(decoding: $0.body, as: UTF8.self) }, "hello, gzip world\n")
        XCTAssertEqual(requests.first?.bodyLength, Int64(first.count + second.count), "the bytes on the wire")
        XCTAssertEqual(requests.first?.inflatedLength, 18)
        XCTAssertEqual(requests.map(\.answeredStatus), [201, 400, 201])
        XCTAssertEqual(GzipInflater.inflate(first), Array("hello, ".utf8))
        XCTAssertNil(GzipInflater.inflate(Array(first.dropLast())))
    }

    func testChunkedBodyIsDecodedIgnoringExtensionsAndTrailers() throws {
        let connection = try RawHTTPConnection(port: receiver.port)
        try connection.send(
            "PUT /up/chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n")

        let response = try connection.readResponse()

        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.reason, "Created")
        XCTAssertEqual(response.header("Content-Length"), "0")
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        XCTAssertEqual(receiver.requests.first.map { String(decoding: $0.body, as: UTF8.self) }, "hello 0123456789")
        XCTAssertEqual(receiver.requests.first?.bodyComplete, true)
    }

    func testLargeChunkedBodyArrivesByteForByte() throws {
        let body = TestBytes.pattern(200_000, seed: 3)
        var wire = Array("POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        var offset = 0
        for size in [1, 70_000, 65_536, 20_000] + [body.count] {
            let end = min(body.count, offset + size)
            guard end > offset else { break }
            wire += Array((String(end - offset, radix: 16) + "\r\n").utf8) + body[offset..<end] + Array("\r\n".utf8)
            offset = end
        }
        wire += Array("0\r\n\r\n".utf8)
        let connection = try RawHTTPConnection(port: receiver.port)
        try connection.send(wire)

        XCTAssertEqual(try connection.readResponse().status, 201)
        XCTAssertTrue(receiver.requests.first?.body == body)
    }

    func testGetWithoutFramingHeadersHasNoBody() {
        receiver.setScript(.always(.status(200, body: "pong")))

        let result = URLSessionClient.fetch(receiver.baseURL + "/ping")

        XCTAssertEqual(result.status, 200)
        XCTAssertEqual(String(decoding: result.body, as: UTF8.self), "pong")
        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        XCTAssertEqual(receiver.requests.first?.method, "GET")
        XCTAssertEqual(receiver.requests.first?.bodyLength, 0)
        XCTAssertEqual(receiver.requests.first?.bodyComplete, true)
    }

    func testHeadAnswerCarriesLengthButNoBody() throws {
        receiver.setScript(.always(.status(200, body: "four")))
        let connection = try RawHTTPConnection(port: receiver.port)
        try connection.send("HEAD /x HTTP/1.1\r\nHost: x\r\n\r\nGET /y HTTP/1.1\r\nHost: x\r\n\r\n")

        let head = try connection.readResponse(toHEAD: true)
        let get = try connection.readResponse()

        XCTAssertEqual(head.header("Content-Length"), "4")
        XCTAssertEqual(get.body, Array("four".utf8))
    }

    func testRequestRecordsHeadersCaseInsensitively() {
        _ = URLSessionClient.upload(
            receiver.baseURL + "/h", body: Data([1]), headers: ["Idempotency-Key": "key-1", "X-Custom": "a b"])

        XCTAssertTrue(receiver.waitForRequests(count: 1, timeout: 5))
        let request = receiver.requests.first
        XCTAssertEqual(request?.header("idempotency-key"), "key-1")
        XCTAssertEqual(request?.header("X-CUSTOM"), "a b")
        XCTAssertNil(request?.header("X-Missing"))
        XCTAssertEqual(request?.index, 0)
        XCTAssertEqual(request.map { abs($0.receivedAt - Date().timeIntervalSince1970) < 60 }, true)
    }
}
