import Foundation
import XCTest

/// `scripts/X --help` prints the script's own comment block: its usage, and nothing of its code.
final class ScriptHelpTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `bash scripts/<name> ARGS` from the repository; its exit code and stdout.
    static func runScript(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [repository.appendingPathComponent("scripts/" + name).path] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, printed)
    }

    func testHelp_printsTheUsageBlock_withoutAnyLineOfTheScript() throws {
        for (script, usage) in [("install", "scripts/install [--prefix DIR]"), ("bench", "scripts/bench --quick"),
                                ("pytools", "scripts/pytools TOOL"), ("package", "scripts/package --check"),
                                ("package-check", "scripts/package-check DEB TARBALL STATIC_BINARY"),
                                ("tus-server", "scripts/tus-server --dir DIR")] {
            let (status, printed) = try Self.runScript(script, ["--help"])
            XCTAssertEqual(status, 0, "\(script): \(printed)")
            XCTAssertTrue(printed.contains(usage), "\(script) --help names its usage: \(printed)")
            for line in printed.split(separator: "\n") {
                XCTAssertFalse(line.hasPrefix("set -") || line.hasPrefix("#!") || line.hasPrefix("cd "),
                               "\(script) --help prints a line of its code: '\(line)'")
            }
        }
    }
}
