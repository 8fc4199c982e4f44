import Foundation
import XCTest

/// `--transport curl` over HTTP/2 (`Transport.Only.curlOptions`; nginx with TLS and ALPN, trusted
/// with `--cacert`): answers are classed as over HTTP/1.1, where the status line reads `HTTP/2 503`
/// and header names come lowercase (`retry-after`). `HTTPFaultTests` covers every fault over
/// HTTP/1.1 against our own receiver with each transport; these are the ones nginx can script.
final class CurlHTTP2FaultTests: TransportTestCase {
    private var nginx: NginxServer!
    private var certificate = ""

    override func setUpWithError() throws {
        let (binary, certificate, key) = try NginxServer.tlsMaterial(for: self)
        nginx = try NginxServer(binary: binary, tls: (certificate, key), http2: true)
        self.certificate = certificate
        addTeardownBlock { [nginx] in nginx?.stop() }
    }

    /// Drains one item to `path` on nginx over HTTP/2 and returns the result and the item's json.
    private func drainOne(
        _ name: String, _ bytes: [UInt8], to path: String, extra: [String] = []
    ) throws -> (SpooldProcess.Result, TestSpool) {
        let spool = try TestSpool(self)
        try spool.drop(name, bytes)
        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "https://127.0.0.1:\(nginx.port)/\(path)/", "--settle", "0",
             "--cacert", certificate, "--retry-base", "0.01"] + transportArguments + extra, timeout: 60)
        return (result, spool)
    }

    private func onlyJSON(_ spool: TestSpool, in folder: String) throws -> [String: Any] {
        let name = try XCTUnwrap(spool.files(in: folder).first { $0.hasSuffix(".json") }, "no json in \(folder)/")
        return try spool.json(folder + "/" + name)
    }

    /// A 503 with a Retry-After is throttling: the attempt is handed back uncounted and no request
    /// goes before the Retry-After's 7 s (without it, read, the bare 503 would be retried at
    /// once, --retry-base 0.01, and counted).
    func testBusyWithRetryAfter_isThrottling_andPausesUntilItsTime() throws {
        try only(.curlOptions) { _ in
            let (result, spool) = try drainOne("busy.bin", payload(100_000, seed: 41), to: "busy", extra: ["--max-time", "2"])

            XCTAssertEqual(result.exitCode, 5, result.stderr + nginx.errorLog)  // stopped by --max-time, item still queued
            let json = try onlyJSON(spool, in: "pending")
            XCTAssertEqual((json["attempts"] as? [[String: Any]])?.count, 0, "the attempt was handed back")
            XCTAssertTrue(spool.files(in: "pending").contains { $0.hasSuffix(".a0.json") }, "\(spool.files(in: "pending"))")
            XCTAssertEqual(nginx.requests.map(\.protocol), ["HTTP/2.0"], "retry-after (lowercase over HTTP/2) was read: one request")
            XCTAssertTrue(result.stderr.contains("the endpoint throttles (HTTP 503)"), result.stderr)
        }
    }

    func testRefusal_isFinal_afterOneAttempt() throws {
        try only(.curlOptions) { _ in
            let (result, spool) = try drainOne("big.bin", payload(200_000, seed: 42), to: "refuse")

            XCTAssertEqual(result.exitCode, 1, result.stderr)
            let json = try onlyJSON(spool, in: "failed")
            let attempts = try XCTUnwrap(json["attempts"] as? [[String: Any]])
            XCTAssertEqual(attempts.map { $0["httpStatus"] as? Int }, [413])
            XCTAssertEqual(attempts.map { $0["outcome"] as? String }, ["final"])
        }
    }

    func testSameOriginRedirect_sendsTheWholeBodyAgain_overHTTP2() throws {
        try only(.curlOptions) { _ in
            let bytes = payload(3 << 20, seed: 43)
            let (result, _) = try drainOne("moved.bin", bytes, to: "moved")

            XCTAssertEqual(result.exitCode, 0, result.stderr + nginx.errorLog)
            let stored = try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/www/up/moved.bin"))
            XCTAssertTrue(Array(stored) == bytes, "the body re-sent to the Location arrives whole")
            XCTAssertEqual(nginx.requests.map(\.protocol), ["HTTP/2.0", "HTTP/2.0"])
        }
    }

    func testConnectionClosedWithoutAnAnswer_isRetryable_everyAttemptCounted() throws {
        try only(.curlOptions) { _ in
            let (result, spool) = try drainOne("drop.bin", payload(50_000, seed: 44), to: "drop", extra: ["--max-attempts", "2"])

            XCTAssertEqual(result.exitCode, 1, result.stderr)
            let json = try onlyJSON(spool, in: "failed")
            let attempts = try XCTUnwrap(json["attempts"] as? [[String: Any]])
            XCTAssertEqual(attempts.map { $0["outcome"] as? String }, ["retryable", "retryable"])
            XCTAssertTrue(attempts.allSatisfy { $0["httpStatus"] == nil }, "\(attempts)")
        }
    }
}
