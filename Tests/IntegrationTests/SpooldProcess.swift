import Dispatch
import Foundation
import XCTest

/// Runs the built `spoold` binary, as a user would, and captures what it printed.
///
/// Output goes to files (no pipe can fill up and stall the child); completion is awaited on the
/// process's termination handler, never by sleeping.
final class SpooldProcess: @unchecked Sendable {
    struct Result {
        var exitCode: Int32
        /// The signal that ended the process (e.g. SIGKILL), or nil when it exited.
        var signal: Int32?
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// `.build/<config>/spoold`, beside the test bundle.
    static var binaryPath: String {
        if let override = ProcessInfo.processInfo.environment["SPOOLD_BINARY"] { return override }
        return Bundle.main.bundleURL.appendingPathComponent("spoold").path
    }

    let process = Process()
    /// Holds the process's stdout and stderr files; removed with this object (every test run
    /// starts hundreds of processes: left behind, they filled /tmp with tens of thousands of folders).
    private let dir: URL
    private let outURL: URL
    private let errURL: URL
    private let exited = DispatchSemaphore(value: 0)

    init(_ arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-proc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        outURL = dir.appendingPathComponent("stdout")
        errURL = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: SpooldProcess.binaryPath)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["SPOOLD_SPOOL"] = nil
        env["SPOOLD_URL"] = nil
        for (k, v) in environment { env[k] = v }
        process.environment = env
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
    }

    /// Runs to completion (killed after `timeout` seconds, which fails the test).
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60,
                    file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        try SpooldProcess(arguments, environment: environment).wait(timeout: timeout, file: file, line: line)
    }

    deinit {
        try? FileManager.default.removeItem(at: dir)
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Every thread's stack of a hung daemon, for the failure message, when gdb is installed
    /// (it is not required: a hang in CI is then reported without them). Bounded at 20 s.
    static func threadStacks(of pid: Int32) -> String {
        let gdb = "/usr/bin/gdb"
        guard FileManager.default.isExecutableFile(atPath: gdb) else { return "" }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: gdb)
        probe.arguments = ["-p", String(pid), "-batch", "-nx", "-ex", "thread apply all bt 30"]
        let out = Pipe()
        probe.standardOutput = out
        probe.standardError = FileHandle.nullDevice
        probe.standardInput = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "" }
        let collected = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var data = Data()
        DispatchQueue.global().async {
            data = out.fileHandleForReading.readDataToEndOfFile()
            collected.signal()
        }
        if collected.wait(timeout: .now() + 20) == .timedOut {
            probe.terminate()
            return "\n(gdb did not finish within 20 s)"
        }
        probe.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("#") || $0.hasPrefix("Thread") }
        return "\nthreads of the hung daemon (gdb):\n" + text.joined(separator: "\n")
    }

    func wait(timeout: Double, file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            let stacks = SpooldProcess.threadStacks(of: process.processIdentifier)
            kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(timeout: .now() + 10)
            XCTFail("spoold \(process.arguments ?? []) did not finish within \(timeout) s; stderr:\n\(readErr())\(stacks)",
                    file: file, line: line)
        }
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return Result(exitCode: process.terminationStatus, signal: signal, stdout: read(outURL), stderr: readErr())
    }

    func readErr() -> String { read(errURL) }

    private func read(_ url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }
}
