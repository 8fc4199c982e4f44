import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import UploadReceiver
import XCTest

/// Scripts pick responses by arrival order, per idempotency key, or by any rule.
final class ResponseScriptTests: XCTestCase {
    private func request(index: Int, key: String?) -> ReceivedRequest {
        ReceivedRequest(
            index: index, method: "PUT", target: "/x",
            headers: key.map { [(name: "Idempotency-Key", value: $0)] } ?? [])
    }

    func testSequenceAnswersByArrivalIndex() {
        let script = ResponseScript.sequence([.status(500), .status(503)], thenAlways: .status(201))

        XCTAssertEqual((0..<4).map { script.response(for: request(index: $0, key: nil)).status }, [500, 503, 201, 201])
    }

    func testPerKeyCountsEachKeySeparately() {
        let script = ResponseScript.perKey([.status(500), .status(502)], then: .status(201))

        let statuses = ["a", "a", "b", "a", "b", "b", "a"].enumerated().map {
            script.response(for: request(index: $0.offset, key: $0.element)).status
        }

        XCTAssertEqual(statuses, [500, 502, 500, 201, 502, 201, 201])
    }

    func testPerKeyRequestsWithoutKeyShareOneCount() {
        let script = ResponseScript.perKey([.status(500)], then: .status(201))

        XCTAssertEqual(script.response(for: request(index: 0, key: nil)).status, 500)
        XCTAssertEqual(script.response(for: request(index: 1, key: nil)).status, 201)
    }

    /// A store with a request rate: a tenth of a second's requests at once, then one per token;
    /// throttled ones get S3's 503 SlowDown and never reach the script underneath.
    func testThrottling_acceptsItsRate_andAnswersTheRestSlowDown() {
        let script = ResponseScript.throttling(perSecond: 1000, .perKey([.status(500)], then: .status(201)))
        let started = Date()
        let statuses = (0..<1000).map { script.response(for: request(index: $0, key: nil)).status }
        let elapsed = Date().timeIntervalSince(started)
        let accepted = statuses.filter { $0 != 503 }.count
        XCTAssertGreaterThanOrEqual(accepted, 100, "the bucket of 100")
        XCTAssertLessThanOrEqual(accepted, 101 + Int(elapsed * 1000), "then 1,000 a second")
        XCTAssertEqual(statuses.first, 500, "the script underneath answers the first")
        XCTAssertEqual(statuses.filter { $0 == 500 }.count, 1, "and counts only what it answers")
        let slowDown = ResponseScript.throttling(perSecond: 1, .always(201))
        _ = slowDown.response(for: request(index: 0, key: nil))
        let refused = slowDown.response(for: request(index: 1, key: nil))
        XCTAssertEqual(refused.status, 503)
        XCTAssertTrue(String(decoding: refused.body, as: UTF8.self).contains("<Code>SlowDown</Code>"))
    }

    func testSequenceOverHTTP() throws {
        let receiver = UploadReceiver(script: .sequence([.status(500, body: "no"), .status(503)], thenAlways: .status(201)))
        try receiver.start()
        defer { receiver.stop() }

        let results = (0..<4).map { _ in URLSessionClient.upload(receiver.baseURL + "/s", body: Data([1, 2])) }

        XCTAssertEqual(results.map(\.status), [500, 503, 201, 201])
        XCTAssertEqual(String(decoding: results[0].body, as: UTF8.self), "no")
        XCTAssertTrue(receiver.waitForRequests(count: 4, timeout: 5))
        XCTAssertEqual(receiver.requests.map(\.answeredStatus), [500, 503, 201, 201])
    }

    func testPerKeyOverHTTP() throws {
        let receiver = UploadReceiver(script: .perKey([.status(500)], then: .status(201)))
        try receiver.start()
        defer { receiver.stop() }

        let statuses = ["k1", "k2", "k1", "k2", "k1"].map {
            URLSessionClient.upload(receiver.baseURL + "/p", body: Data([9]), headers: ["Idempotency-Key": $0]).status
        }

        XCTAssertEqual(statuses, [500, 500, 201, 201, 201])
    }

    func testScriptCanBeSwappedWhileRunning() throws {
        let receiver = UploadReceiver(script: .always(500))
        try receiver.start()
        defer { receiver.stop() }

        let before = URLSessionClient.upload(receiver.baseURL + "/a", body: Data([1]))
        receiver.setScript(.always(.status(202, body: "ok", headers: [("X-Reply", "yes")])))
        let after = URLSessionClient.upload(receiver.baseURL + "/a", body: Data([1]))

        XCTAssertEqual(before.status, 500)
        XCTAssertEqual(after.status, 202)
        XCTAssertEqual(after.headers["x-reply"], "yes")
    }

    func testScriptSeesTheHeadOnlyRequest() throws {
        let seen = LockedList<ReceivedRequest>()
        let receiver = UploadReceiver(script: ResponseScript { request in
            seen.append(request)
            return .status(201)
        })
        try receiver.start()
        defer { receiver.stop() }

        _ = URLSessionClient.upload(receiver.baseURL + "/seen", body: Data([1, 2, 3]))

        let request = seen.values.first
        XCTAssertEqual(request?.target, "/seen")
        XCTAssertEqual(request?.index, 0)
        XCTAssertEqual(request?.body, [])
        XCTAssertEqual(request?.bodyComplete, false)
        XCTAssertEqual(receiver.requests.first?.body, [1, 2, 3])
    }
}
