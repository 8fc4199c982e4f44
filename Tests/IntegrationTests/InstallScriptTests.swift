import Foundation
import XCTest

/// `scripts/install` into a DESTDIR: the binary, the unit with the chosen paths, the spool folder.
final class InstallScriptTests: XCTestCase {
    func testInstall_intoDestdir_placesBinaryUnitAndSpool_withTheGivenPaths() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let stage = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-install-\(UUID().uuidString)").path
        addTeardownBlock { try? FileManager.default.removeItem(atPath: stage) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [root.path + "/scripts/install", "--binary", SpooldProcess.binaryPath, "--prefix", "/opt/spoold",
                             "--spool", "/srv/uploads"]
        process.environment = ProcessInfo.processInfo.environment.merging(["DESTDIR": stage]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        XCTAssertEqual(process.terminationStatus, 0, printed)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: stage + "/opt/spoold/bin/spoold"))
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: stage + "/srv/uploads", isDirectory: &isDirectory) && isDirectory.boolValue)
        let unit = try String(contentsOfFile: stage + "/etc/systemd/system/spoold.service", encoding: .utf8)
        for line in ["Type=notify", "ExecStart=/opt/spoold/bin/spoold run --spool /srv/uploads $SPOOLD_ARGS",
                     "ReadWritePaths=/srv/uploads", "ProtectSystem=strict", "NoNewPrivileges=yes", "After=network-online.target",
                     "Wants=network-online.target", "AmbientCapabilities=CAP_LEASE"] {
            XCTAssertTrue(unit.split(separator: "\n").contains(Substring(line)), "unit lacks '\(line)'")
        }
        XCTAssertTrue(unit.contains("\nWatchdogSec="))
        XCTAssertFalse(unit.contains("/usr/local/bin") || unit.contains("/var/spool/spoold"), "every default path was replaced")
        XCTAssertTrue(printed.contains("installed \(stage)/opt/spoold/bin/spoold"), printed)
        XCTAssertTrue(printed.contains("nothing was started"), printed)
        XCTAssertTrue(unit.contains("\nEnvironment=AWS_SHARED_CREDENTIALS_FILE=/etc/spoold/credentials\n"),
                      "the service reads S3 credentials from a file ProtectHome= does not hide")
        XCTAssertTrue(unit.contains("\nProtectHome=yes\n"))

        // The settings file: only root may read it (it may hold secrets), and a second install keeps it.
        let defaults = stage + "/etc/default/spoold"
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: defaults)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o600, "mode \(String(mode, radix: 8))")
        XCTAssertTrue(try String(contentsOfFile: defaults, encoding: .utf8).contains("#SPOOLD_URL="))
        try "SPOOLD_URL=http://127.0.0.1:9/\n".write(toFile: defaults, atomically: false, encoding: .utf8)
        let again = Process()
        again.executableURL = process.executableURL
        again.arguments = process.arguments
        again.environment = process.environment
        again.standardOutput = FileHandle.nullDevice
        try again.run()
        again.waitUntilExit()
        XCTAssertEqual(again.terminationStatus, 0)
        XCTAssertEqual(try String(contentsOfFile: defaults, encoding: .utf8), "SPOOLD_URL=http://127.0.0.1:9/\n", "kept")
    }
}
