import Foundation
import UploadReceiver
import XCTest

/// What spoold writes to its log: one line per event, whatever the names and answers hold.
final class LogTests: XCTestCase {
    private func startReceiver() throws -> UploadReceiver {
        let receiver = UploadReceiver(script: .always(201))
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
}
