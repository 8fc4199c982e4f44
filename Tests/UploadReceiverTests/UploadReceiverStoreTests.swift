import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UploadReceiver
import XCTest

/// Bodies answered 2xx land in the store directory under predictable, safe names.
final class UploadReceiverStoreTests: XCTestCase {
    private var directory: String!

    override func setUp() {
        directory = NSTemporaryDirectory() + "receiver-store-\(UUID().uuidString)"
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func storedNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func testStoredFileEqualsTheBody() throws {
        let receiver = UploadReceiver(storeDirectory: directory)
        try receiver.start()
        defer { receiver.stop() }
        let body = TestBytes.pattern(1_000_000)

        let result = URLSessionClient.upload(receiver.baseURL + "/up/data.bin", body: Data(body))

        XCTAssertEqual(result.status, 201)
        XCTAssertEqual(storedNames(), ["0-data.bin"])
        XCTAssertEqual(receiver.requests.first?.storedPath, directory + "/0-data.bin")
        XCTAssertTrue(FileManager.default.contents(atPath: directory + "/0-data.bin") == Data(body))
    }

    func testStoredNamesArePercentDecodedAndSanitised() throws {
        let receiver = UploadReceiver(storeDirectory: directory)
        try receiver.start()
        defer { receiver.stop() }

        for path in ["/up/my%20file.txt", "/up/r%C3%A9sum%C3%A9%20%E2%9C%93.pdf?v=1", "/up/", "/up/a%2F..%2Fb", "/up/%2e%2e"] {
            XCTAssertEqual(URLSessionClient.upload(receiver.baseURL + path, body: Data([1])).status, 201, path)
        }

        XCTAssertEqual(storedNames(), ["0-my_file.txt", "1-r_sum___.pdf", "2-body", "3-a_.._b", "4-.."].sorted())
    }

    func testStoredFileNameRules() {
        XCTAssertEqual(UploadReceiver.storedFileName(index: 3, target: "/up/my%20file.txt"), "3-my_file.txt")
        XCTAssertEqual(UploadReceiver.storedFileName(index: 0, target: "/x/%E6%97%A5%E6%9C%AC.bin#frag"), "0-__.bin")
        XCTAssertEqual(UploadReceiver.storedFileName(index: 1, target: "http://127.0.0.1:9/a/b.c?q"), "1-b.c")
        XCTAssertEqual(UploadReceiver.storedFileName(index: 2, target: "*"), "2-body")
        XCTAssertEqual(UploadReceiver.storedFileName(index: 5, target: "/bad%zzescape"), "5-bad_zzescape")
    }

    func testOnlyComplete2xxBodiesAreStored() throws {
        let receiver = UploadReceiver(
            script: .sequence([.status(500), .faulted(.closeMidBody), .faulted(.neverAnswer)], thenAlways: .status(200)),
            storeDirectory: directory)
        try receiver.start()
        defer { receiver.stop() }
        // Raw connections keep this about the receiver: a client library may retry on its own.
        func put(_ target: String, _ body: String) throws -> RawHTTPConnection {
            let connection = try RawHTTPConnection(port: receiver.port)
            try connection.send("PUT \(target) HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            return connection
        }

        XCTAssertEqual(try put("/a", "12").readResponse().status, 500)
        XCTAssertTrue(try put("/b", String(repeating: "x", count: 100_000)).isClosedByPeer())
        let held = try put("/c", "3")
        XCTAssertTrue(receiver.waitForRequests(count: 3, timeout: 5))
        held.close()
        XCTAssertEqual(try put("/d", "4").readResponse().status, 200)

        XCTAssertEqual(storedNames(), ["3-d"])
    }

    func testBodiesNotKeptInMemoryAreStillCountedAndStored() throws {
        let receiver = UploadReceiver(storeDirectory: directory, keepBodiesInMemory: false)
        try receiver.start()
        defer { receiver.stop() }
        let body = TestBytes.pattern(2_000_000)

        XCTAssertEqual(URLSessionClient.upload(receiver.baseURL + "/big", body: Data(body)).status, 201)

        XCTAssertEqual(receiver.requests.first?.body, [])
        XCTAssertEqual(receiver.requests.first?.bodyLength, 2_000_000)
        XCTAssertTrue(FileManager.default.contents(atPath: directory + "/0-big") == Data(body))
    }

    func testStoreDirectoryIsCreated() throws {
        let nested = directory + "/a/b"
        let receiver = UploadReceiver(storeDirectory: nested)
        try receiver.start()
        defer { receiver.stop() }

        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: nested, isDirectory: &isDirectory))
        XCTAssertTrue(isDirectory.boolValue)
    }
}
