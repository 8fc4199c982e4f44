import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The `spoold-receiver` executable, run as a child process. Skipped when the binary has not
/// been built next to the test bundle (`swift test` builds it).
final class SpooldReceiverToolTests: XCTestCase {
    private func toolURL() throws -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let tool = directory.appendingPathComponent("spoold-receiver")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            throw XCTSkip("spoold-receiver is not built at \(tool.path)")
        }
        return tool
    }

    func testPrintsItsURLFirstLogsRequestsStoresBodiesAndStopsOnSIGTERM() throws {
        let store = NSTemporaryDirectory() + "receiver-tool-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: store) }
        let child = try RunningTool(try toolURL(), arguments: ["--port", "0", "--fail-first", "1", "--store", store])
        defer { child.kill() }

        let firstLine = try XCTUnwrap(child.stdout.waitForLine(containing: "listening", timeout: 10))
        XCTAssertTrue(firstLine.hasPrefix("spoold-receiver: listening on http://127.0.0.1:"), firstLine)
        XCTAssertTrue(firstLine.hasSuffix("/ (for testing, not production)"), firstLine)
        let base = try XCTUnwrap(firstLine.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast()

        let statuses = (0..<2).map { _ in
            URLSessionClient.upload("\(base)/up/a%20b.txt", body: Data("hello".utf8), headers: ["Idempotency-Key": "k"]).status
        }

        XCTAssertEqual(statuses, [500, 201])
        XCTAssertNotNil(child.stdout.waitForLine(containing: "PUT /up/a%20b.txt 5 bytes -> 201 (Idempotency-Key: k", timeout: 5))
        XCTAssertEqual(FileManager.default.contents(atPath: store + "/1-a_b.txt"), Data("hello".utf8))
        XCTAssertEqual(child.stdout.lines.first, firstLine)
        XCTAssertEqual(child.terminateAndWait(timeout: 5), 0)
    }

    /// `--throttle 1`: the first request of a burst is accepted, the next ones get S3's 503
    /// SlowDown, and the count is printed at the stop, even with --quiet.
    func testThrottle_answersPastTheRateSlowDown_andCountsThem() throws {
        let child = try RunningTool(try toolURL(), arguments: ["--port", "0", "--throttle", "1", "--quiet"])
        defer { child.kill() }
        let firstLine = try XCTUnwrap(child.stdout.waitForLine(containing: "listening", timeout: 10))
        let base = try XCTUnwrap(firstLine.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast()

        let answers = (0..<3).map { _ in URLSessionClient.upload("\(base)/up/x", body: Data("x".utf8)) }

        XCTAssertEqual(answers.map(\.status), [201, 503, 503])
        XCTAssertTrue(String(decoding: answers[1].body, as: UTF8.self).contains("<Code>SlowDown</Code>"))
        XCTAssertEqual(child.terminateAndWait(timeout: 5), 0)
        XCTAssertNotNil(child.stdout.waitForLine(containing: "stopped after 3 requests, 2 answered 503 SlowDown (--throttle 1)", timeout: 5))
    }

    func testUsageErrorExitsWithStatus2() throws {
        let child = try RunningTool(try toolURL(), arguments: ["--status", "nope"])

        XCTAssertEqual(child.waitForExit(timeout: 10), 2)
        XCTAssertNotNil(child.stderr.waitForLine(containing: "--status must be 200-599", timeout: 1))
    }

    func testHelpExitsWithStatus0() throws {
        let child = try RunningTool(try toolURL(), arguments: ["--help"])

        XCTAssertEqual(child.waitForExit(timeout: 10), 0)
        XCTAssertNotNil(child.stdout.waitForLine(containing: "not for production", timeout: 1))
    }

    /// A child process whose output is collected line by line.
    private final class RunningTool {
        let process = Process()
        let stdout = LineCollector()
        let stderr = LineCollector()
        private let exited = DispatchSemaphore(value: 0)

        init(_ executable: URL, arguments: [String]) throws {
            process.executableURL = executable
            process.arguments = arguments
            process.standardOutput = stdout.pipe
            process.standardError = stderr.pipe
            let exited = self.exited
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
        }

        /// The exit status, or nil if the process is still running after `timeout` seconds.
        func waitForExit(timeout: Double) -> Int32? {
            guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
            exited.signal()
            return process.terminationStatus
        }

        func terminateAndWait(timeout: Double) -> Int32? {
            process.terminate()
            return waitForExit(timeout: timeout)
        }

        func kill() {
            if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
            _ = waitForExit(timeout: 5)
        }
    }

    /// Reads a pipe on a background thread and lets the test wait for a matching line.
    private final class LineCollector: @unchecked Sendable {
        let pipe = Pipe()
        private let condition = NSCondition()
        private var text = ""

        init() {
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self else { return }
                if data.isEmpty {
                    handle.readabilityHandler = nil
                    return
                }
                condition.lock()
                text += String(decoding: data, as: UTF8.self)
                condition.broadcast()
                condition.unlock()
            }
        }

        var lines: [String] {
            condition.lock()
            defer { condition.unlock() }
            return text.split(separator: "\n").map(String.init)
        }

        /// The first complete line containing `fragment`, waiting up to `timeout` seconds.
        func waitForLine(containing fragment: String, timeout: Double) -> String? {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while true {
                let complete = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                if let line = complete.first(where: { $0.contains(fragment) }) { return String(line) }
                if !condition.wait(until: deadline) { return nil }
            }
        }
    }
}
