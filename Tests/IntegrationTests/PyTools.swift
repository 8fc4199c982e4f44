import Foundation
import XCTest

/// The test tools that come from PyPI (`rclone`, `weed`), in the project's own virtual
/// environment: `scripts/pytools --bin` names its folder, and scripts/test installs them there.
/// Never looked up on PATH: a tool in the system Python is not the project's.
enum PyTools {
    /// `.venv/bin` (or `SPOOLD_VENV`'s), as scripts/pytools says; nil when the script cannot run.
    static let bin: String? = {
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [repository.appendingPathComponent("scripts/pytools").path, "--bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let folder = printed.trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && !folder.isEmpty ? folder : nil
    }()

    /// The tool's program in the project's virtual environment, or nil.
    static func program(_ name: String) -> String? {
        guard let bin else { return nil }
        let path = bin + "/" + name
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Why a test that needs `tool` is skipped, and how to get it.
    static func missing(_ tool: String, _ what: String) -> XCTSkip {
        XCTSkip("\(what) is not installed in the project's virtual environment \(bin ?? ".venv/bin") "
            + "(scripts/test installs it there: bash scripts/pytools \(tool))")
    }
}
