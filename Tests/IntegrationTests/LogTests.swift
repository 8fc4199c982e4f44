import Foundation
import UploadReceiver
import XCTest

/// What spoold writes to its log: one line per event, whatever the names and answers hold.
final class LogTests: XCTestCase {
    private func startReceiver(_ script: ResponseScript = .always(201)) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script)
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    /// Every stderr line is an event line: `<timestamp> spoold <level>: ...`.
    private func assertEveryLineIsAnEvent(_ stderr: String, file: StaticString = #filePath, line: UInt = #line) {
        let pattern = try! NSRegularExpression(pattern: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z spoold (debug|info|warning|error): "#)
        for text in stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let s = String(text)
            XCTAssertNotNil(
                pattern.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)), "not an event line: \(s)", file: file, line: line)
        }
    }

    func testNamesWithNewlinesAndEscapes_cannotForgeALogLine() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let forged = "2026-01-01T00:00:00.000Z spoold error: forged"
        try spool.drop("evil\n\(forged)", [1, 2, 3])
        try spool.drop("tint\u{1b}[31m\r.txt", [4])

        let result = try SpooldProcess.run(
            ["drain", "-v", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.count, 2)
        assertEveryLineIsAnEvent(result.stderr)
        XCTAssertFalse(result.stderr.contains("\n" + forged), result.stderr)
        XCTAssertFalse(result.stderr.contains("\u{1b}"), "no raw ESC reaches the terminal")
        XCTAssertTrue(result.stderr.contains("evil\\n" + forged), "the name is logged, escaped: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("tint\\x1b[31m\\r.txt"), result.stderr)
    }

    /// At the default level, each upload's line names where it went (the URL's path, decoded),
    /// once: the id alone keeps only an ASCII hint of the name.
    func testEachUpload_isLoggedAtInfoOnce_withTheURLPathItWentTo() throws {
        let receiver = try startReceiver(.sequence([.status(500)], thenAlways: .status(201)))
        let spool = try TestSpool(self)
        try spool.drop("Grüße – 日本語 ✓.txt", [1, 2, 3])

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/cam7/", "--settle", "0", "--retry-base", "0.05"])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.count, 2, "a 500, then a 201")
        let uploaded = result.stderr.split(separator: "\n").filter { $0.contains(" spoold info: uploaded ") }
        XCTAssertEqual(uploaded.count, 1, result.stderr)
        XCTAssertTrue(
            uploaded.first?.contains("-Gr_e_.txt to /up/cam7/Grüße – 日本語 ✓.txt (3 B, attempt 2, HTTP 201)") == true, result.stderr)
        XCTAssertEqual(result.stderr.components(separatedBy: "/up/cam7/Grüße").count - 1, 1, "once per upload: \(result.stderr)")
    }

    func testAnItemGivenUpOn_isLoggedWithTheURLPathItWentTo() throws {
        let receiver = try startReceiver(.always(400))
        let spool = try TestSpool(self)
        try spool.drop("été.csv", [1])

        let result = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", receiver.baseURL + "/in/", "--settle", "0"])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("spoold warning: gave up on "), result.stderr)
        XCTAssertTrue(result.stderr.contains("-t_.csv (/in/été.csv): HTTP 400"), result.stderr)
    }

    func testSecretsInURLs_neverReachTheLogOrTheJSON_atAnyLevel() throws {
        let other = try startReceiver()
        // The first request is redirected with a 302 (refused: it would turn PUT into GET) to a
        // presigned-looking URL; the reason quotes it.
        let receiver = try startReceiver(.sequence(
            [.status(302, headers: [("Location", other.baseURL + "/k?X-Amz-Credential=AKIAsecret&X-Amz-Signature=sig0secret")])],
            thenAlways: .status(201)))
        let spool = try TestSpool(self)
        try spool.drop("first.txt", [1])
        try spool.drop("second.txt", [2])
        let url = receiver.baseURL.replacingOccurrences(of: "http://", with: "http://user:pw0rd@") + "/up/?token=s3cr3t&kind=a"

        let result = try SpooldProcess.run(
            ["drain", "-v", "--concurrency", "1", "--spool", spool.path, "--url", url, "--settle", "0"])

        XCTAssertEqual(result.exitCode, 1, "one item was refused: \(result.stderr)")
        XCTAssertEqual(receiver.requests.count, 2)
        XCTAssertTrue(receiver.requests.allSatisfy { $0.target == "/up/?token=s3cr3t&kind=a" }, "the real URL is sent")
        let failed = try XCTUnwrap(spool.files(in: "failed").first { $0.hasSuffix(".json") })
        let json = String(decoding: try Data(contentsOf: URL(fileURLWithPath: spool.path + "/failed/" + failed)), as: UTF8.self)
        for secret in ["s3cr3t", "pw0rd", "AKIAsecret", "sig0secret"] {
            XCTAssertFalse(result.stderr.contains(secret), "\(secret) in the log:\n\(result.stderr)")
            XCTAssertFalse(json.contains(secret), "\(secret) in the json:\n\(json)")
        }
        XCTAssertTrue(result.stderr.contains("http://REDACTED@127.0.0.1:"), result.stderr)
        XCTAssertTrue(result.stderr.contains("/up/?token=REDACTED&kind=REDACTED (PUT"), "the start line: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("debug: uploading"), "-v request lines are there: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED"), "the redirect: \(result.stderr)")
        XCTAssertTrue(json.contains("X-Amz-Signature=REDACTED"), json)
    }

    func testSecretsInAnInvalidURLArgument_areRedactedInTheUsageError() throws {
        let result = try SpooldProcess.run(["drain", "--url", "ftp://h/x?token=s3cr3t", "--spool", "/nonexistent/spool"])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertFalse(result.stderr.contains("s3cr3t"), result.stderr)
        XCTAssertTrue(result.stderr.contains("token=REDACTED"), result.stderr)
    }
}
