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
    /// The process's stdout and stderr, read through descriptors opened before their folder was
    /// removed (right after the start): every test run starts hundreds of processes, and XCTest
    /// keeps each test case, and so each teardown block's process, alive to the end of the run;
    /// folders left until then filled /tmp with tens of thousands.
    private let out: FileHandle
    private let err: FileHandle
    /// What the process printed, kept once it has exited and been waited for; its descriptors
    /// are closed then (a run keeps hundreds of these objects alive).
    private let printed = NSLock()
    private var finalOutput: (stdout: String, stderr: String)?
    private let exited = DispatchSemaphore(value: 0)

    /// - Parameter wrapper: a program and its arguments that run spoold (`prlimit --nofile=...`).
    init(_ arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil, wrapper: [String] = []) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-proc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let outURL = dir.appendingPathComponent("stdout")
        let errURL = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        out = try FileHandle(forReadingFrom: outURL)
        err = try FileHandle(forReadingFrom: errURL)
        process.executableURL = URL(fileURLWithPath: wrapper.first ?? SpooldProcess.binaryPath)
        process.arguments = wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [SpooldProcess.binaryPath] + arguments
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
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60, wrapper: [String] = [],
                    file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        try SpooldProcess(arguments, environment: environment, wrapper: wrapper).wait(timeout: timeout, file: file, line: line)
    }


    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Every thread's stack of a hung daemon, for the failure message, when gdb is installed
    /// (it is not required: a hang in CI is then reported without them, saying so). Bounded at
    /// 20 s. Never an empty section: when gdb is missing or prints no stack, the text says which,
    /// with gdb's own last words.
    static func threadStacks(of pid: Int32, gdb: String = "/usr/bin/gdb") -> String {
        guard FileManager.default.isExecutableFile(atPath: gdb) else {
            return "\n(no thread stacks of the hung daemon: \(gdb) is not installed; 'apt-get install gdb' adds them)"
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: gdb)
        probe.arguments = ["-p", String(pid), "-batch", "-nx", "-ex", "thread apply all bt 30"]
        let out = Pipe()
        probe.standardOutput = out
        probe.standardError = out
        probe.standardInput = FileHandle.nullDevice
        do { try probe.run() } catch { return "\n(no thread stacks of the hung daemon: \(gdb) does not start: \(error))" }
        let collected = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var data = Data()
        DispatchQueue.global().async {
            data = out.fileHandleForReading.readDataToEndOfFile()
            collected.signal()
        }
        if collected.wait(timeout: .now() + 20) == .timedOut {
            probe.terminate()
            return "\n(no thread stacks of the hung daemon: gdb did not finish within 20 s)"
        }
        probe.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        let stacks = lines.filter { $0.hasPrefix("#") || $0.hasPrefix("Thread") }
        guard !stacks.isEmpty else {
            let said = lines.suffix(3).joined(separator: " | ")
            return "\n(no thread stacks of the hung daemon: gdb printed none, exit \(probe.terminationStatus)"
                + (said.isEmpty ? ", and nothing else)" : "; it said: \(said))")
        }
        return "\nthreads of the hung daemon (gdb):\n" + stacks.joined(separator: "\n")
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
        let output = printed.withLock {
            if let finalOutput { return finalOutput }
            let output = (stdout: read(out), stderr: read(err))
            if !process.isRunning {
                finalOutput = output
                try? out.close()
                try? err.close()
            }
            return output
        }
        return Result(exitCode: process.terminationStatus, signal: signal, stdout: output.stdout, stderr: output.stderr)
    }

    func readErr() -> String { printed.withLock { finalOutput?.stderr ?? read(err) } }

    /// Everything written so far, from byte 0 (`pread`: callers on several threads share the handle).
    private func read(_ handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(handle.fileDescriptor, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
