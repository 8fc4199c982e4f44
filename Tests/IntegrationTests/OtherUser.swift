import Foundation
import XCTest

/// Runs shell commands as another user, the way a second producer on the machine would act:
/// `setpriv --reuid N --regid N --clear-groups` (util-linux). Tests that need one skip, saying
/// why, where the machine does not allow it (not root, no setpriv).
enum OtherUser {
    static let setpriv = "/usr/bin/setpriv"

    /// Skips the test unless commands can run as uid `uid` here.
    static func require(_ uid: Int) throws {
        guard geteuid() == 0 else { throw XCTSkip("acting as another user needs root (the tests run as uid \(geteuid()))") }
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { throw XCTSkip("\(setpriv) (util-linux) is not installed") }
        let status = try run(uid, "true")
        if status != 0 { throw XCTSkip("setpriv --reuid \(uid) failed here (exit \(status)): the machine forbids it") }
    }

    /// Runs `/bin/sh -c script` as uid and gid `uid`, no supplementary groups; returns its exit status.
    @discardableResult
    static func run(_ uid: Int, _ script: String, arguments: [String] = []) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: setpriv)
        process.arguments = ["--reuid", String(uid), "--regid", String(uid), "--clear-groups", "/bin/sh", "-c", script, "sh"] + arguments
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
