import Foundation
import UploadReceiver
import XCTest

/// `spoold drain`'s progress line: on a terminal by default, forced with --progress, redrawn in
/// place at most four times a second.
final class ProgressTests: XCTestCase {
    private static let clear = "\r\u{1B}[K"

    /// The progress lines among what was written to stderr (log lines carry the same prefix).
    private func redraws(_ stderr: String) -> [String] {
        stderr.components(separatedBy: ProgressTests.clear).dropFirst()
            .map { $0.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "" }
            .filter { $0.range(of: #"^\d+/\d+ items, "#, options: .regularExpression) != nil }
    }

    func testForcedProgress_redrawsInPlace_atMostFourTimesASecond_showingRetries() throws {
        // Three items fail twice (retries wait), forty succeed at once, one at a time: many loop
        // turns that each change the line, far more than four a second.
        let flaky = ResponseScript.perKey([.status(500), .status(500)], then: .status(201))
        let receiver = UploadReceiver(script: ResponseScript { $0.target.hasPrefix("/up/p") ? flaky.response(for: $0) : .status(201) })
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        for i in 0..<3 { try spool.drop("p\(i).bin", payload(1000, seed: UInt64(60 + i))) }
        for i in 0..<40 { try spool.drop("q\(i).bin", [UInt8(i)]) }
        let started = Date()

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--retry-base", "0.6", "--concurrency", "1", "--progress"])

        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let lines = redraws(result.stderr)
        XCTAssertGreaterThanOrEqual(lines.count, 3, result.stderr)
        XCTAssertLessThanOrEqual(Double(lines.count), elapsed * 4 + 2, "at most about four redraws a second: \(lines)")
        XCTAssertTrue(lines.contains { $0.contains("retries waiting") }, "\(lines)")
        XCTAssertTrue(lines.last?.hasPrefix("43/43 items, 3.0 KiB/3.0 KiB") == true, "\(lines)")
        XCTAssertTrue(result.stderr.hasSuffix("\n"), "the last line is ended")
        XCTAssertTrue(result.stderr.contains(ProgressTests.clear + "20"), "log lines clear the progress line first")
    }

    func testProgress_offWhenStderrIsNotATerminal_onUnderAPseudoTerminal_offWithNoProgress() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        try spool.drop("a.bin", [1])
        let arguments = ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"]

        let plain = try SpooldProcess.run(arguments)
        XCTAssertEqual(plain.exitCode, 0)
        XCTAssertFalse(plain.stderr.contains("\u{1B}"), "no escapes in a log file: \(plain.stderr)")

        // script(1) runs spoold on a pseudo-terminal and copies what it printed to our stdout.
        try spool.drop("b.bin", [2])
        let command = ([SpooldProcess.binaryPath] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let onTTY = try runScript(command)
        XCTAssertTrue(onTTY.contains(ProgressTests.clear + "1/1 items"), onTTY)

        try spool.drop("c.bin", [3])
        let off = try runScript(command + " --no-progress")
        XCTAssertFalse(off.contains(ProgressTests.clear), off)
        XCTAssertTrue(off.contains("drain finished"), off)
    }

    private func runScript(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self)
    }
}
