import Foundation
import SpoolCore
import UploadReceiver
import XCTest

/// The endpoint decides what success is (issue 14): `--retry-on`/`--final-on`,
/// `--content-digest`, `--success-json`, and the `--on-success`/`--on-failure` hooks, through
/// the binary against the loopback receiver.
final class EndpointRulesTests: XCTestCase {
    private func startReceiver(_ script: ResponseScript = .always(201)) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script)
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    private func drain(_ spool: TestSpool, _ receiver: UploadReceiver, _ extra: [String] = [], timeout: Double = 60)
        throws -> SpooldProcess.Result
    {
        try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--retry-base", "0.05", "--settle", "0"]
                + extra,
            timeout: timeout)
    }

    private func onlyJSON(in spool: TestSpool, _ folder: String) throws -> [String: Any] {
        let names = spool.files(in: folder).filter { $0.hasSuffix(".json") }
        XCTAssertEqual(names.count, 1, "\(folder): \(names)")
        return try spool.json("\(folder)/\(try XCTUnwrap(names.first))")
    }

    private func attempts(_ json: [String: Any]) throws -> [[String: Any]] {
        try XCTUnwrap(json["attempts"] as? [[String: Any]])
    }

    // MARK: - Retry classes

    func testRetryOn404_isRetriedUntilAccepted() throws {
        let receiver = try startReceiver(.perKey([.status(404), .status(404)], then: .status(201)))
        let spool = try TestSpool(self)
        try spool.drop("late.txt", [1, 2, 3])

        let result = try drain(spool, receiver, ["--retry-on", "404,409", "--keep-done"])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.count, 3)
        let outcomes = try attempts(try onlyJSON(in: spool, "done")).map { $0["outcome"] as? String }
        XCTAssertEqual(outcomes, ["retryable", "retryable", "success"])
    }

    func testFinalOn503_parksTheItemAfterOneRequest() throws {
        let receiver = try startReceiver(.always(.status(503, body: "gone for good")))
        let spool = try TestSpool(self)
        try spool.drop("final.txt", [1, 2, 3])

        let result = try drain(spool, receiver, ["--final-on", "503"])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertEqual(receiver.requests.count, 1, "503 is retried by default; --final-on 503 stops at one")
        let json = try onlyJSON(in: spool, "failed")
        XCTAssertEqual(try attempts(json).map { $0["outcome"] as? String }, ["final"])
        XCTAssertTrue((json["failureReason"] as? String ?? "").contains("HTTP 503"), "\(json)")
    }

    func testStatusLists_withJunk_exitTwoNamingTheEntry_andNothingIsSent() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        try spool.drop("kept.txt", [1])
        let cases: [([String], String)] = [
            (["--retry-on", "404,4x9"], "'4x9'"),
            (["--final-on", "99"], "'99'"),
            (["--retry-on", "600"], "'600'"),
            (["--retry-on", "404,,409"], "empty entry"),
            (["--final-on", "200"], "'200'"),
            (["--retry-on", "404,409", "--final-on", "409"], "both name 409"),
        ]
        for (options, expected) in cases {
            let result = try drain(spool, receiver, options)
            XCTAssertEqual(result.exitCode, 2, "\(options): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(options): \(result.stderr)")
        }
        XCTAssertEqual(receiver.requests.count, 0)
    }

    // MARK: - Content-Digest

    private func expectedDigest(_ body: [UInt8]) -> String {
        "sha-256=:" + Data(SHA256.hash(body)).base64EncodedString() + ":"
    }

    func testContentDigest_coversTheExactBody_smallLargeAndMultipart() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let large = payload(4 * 1024 * 1024 + 17, seed: 14)  // above the in-memory limit: streamed from the file
        try spool.drop("hello.txt", Array("hello".utf8))
        try spool.drop("large.bin", large)

        let plain = try drain(spool, receiver, ["--content-digest", "sha-256"])
        XCTAssertEqual(plain.exitCode, 0, plain.stderr)
        let byName = Dictionary(uniqueKeysWithValues: receiver.requests.map { ($0.target, $0) })
        let hello = try XCTUnwrap(byName["/up/hello.txt"])
        XCTAssertEqual(hello.header("Content-Digest"), "sha-256=:LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=:")
        let big = try XCTUnwrap(byName["/up/large.bin"])
        XCTAssertEqual(big.body.count, large.count)
        XCTAssertEqual(big.header("Content-Digest"), expectedDigest(large))

        try spool.drop("form.txt", Array("a form".utf8))
        let form = try drain(spool, receiver, ["--content-digest", "SHA-256", "--form", "file"])
        XCTAssertEqual(form.exitCode, 0, form.stderr)
        let multipart = try XCTUnwrap(receiver.requests.last)
        XCTAssertTrue(multipart.header("Content-Type")?.hasPrefix("multipart/form-data") ?? false)
        XCTAssertEqual(multipart.header("Content-Digest"), expectedDigest(multipart.body), "over the whole multipart body")
        XCTAssertNotEqual(multipart.header("Content-Digest"), expectedDigest(Array("a form".utf8)))
    }

    func testContentDigest_isAbsentByDefault_andAnUnknownAlgorithmIsAUsageError() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        try spool.drop("plain.txt", [1, 2, 3])
        let bad = try drain(spool, receiver, ["--content-digest", "md5"])
        XCTAssertEqual(bad.exitCode, 2)
        XCTAssertTrue(bad.stderr.contains("'md5'"), bad.stderr)
        XCTAssertEqual(receiver.requests.count, 0)

        let result = try drain(spool, receiver)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertNil(try XCTUnwrap(receiver.requests.first).header("Content-Digest"))
    }
}
