import Foundation
import UploadReceiver
import XCTest

/// `scripts/try`, the README's quick start, run with the binaries of this build.
final class TryScriptTests: XCTestCase {
    func testTry_whenItsPortIsTaken_usesAFreeOne_andSaysSo_neverUploadingToTheOtherListener() throws {
        let bin = URL(fileURLWithPath: SpooldProcess.binaryPath).deletingLastPathComponent().path
        guard FileManager.default.isExecutableFile(atPath: bin + "/spoold-receiver") else {
            throw XCTSkip("spoold-receiver is not built in \(bin)")
        }
        let squatter = UploadReceiver(script: .always(201))  // something else listening on the port
        let port = try squatter.start()
        addTeardownBlock { squatter.stop() }
        let work = try TestSpool(self).root + "/try"
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [repository.appendingPathComponent("scripts/try").path]
        var environment = ProcessInfo.processInfo.environment
        environment["SPOOLD_TRY_BIN"] = bin
        environment["SPOOLD_TRY_PORT"] = "\(port)"
        environment["SPOOLD_TRY_DIR"] = work
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        XCTAssertEqual(process.terminationStatus, 0, stdout)
        XCTAssertTrue(stdout.contains("port \(port) cannot be used"), stdout)
        XCTAssertTrue(stdout.contains("Address already in use"), "says why: \(stdout)")
        XCTAssertTrue(stdout.contains("using free port"), stdout)
        XCTAssertEqual(squatter.requests.count, 0, "nothing went to the program that held the port")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work + "/received").count, 4, stdout)
    }

    /// `scripts/try-s3`, the README's S3 trial, against rclone serve s3.
    func testTryS3_drainsTheSampleFilesIntoRclonesBucket() throws {
        guard RcloneS3Server.binary != nil else {
            throw PyTools.missing("rclone", "rclone")
        }
        let bin = URL(fileURLWithPath: SpooldProcess.binaryPath).deletingLastPathComponent().path
        let work = try TestSpool(self).root + "/try-s3"
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [repository.appendingPathComponent("scripts/try-s3").path]
        var environment = ProcessInfo.processInfo.environment
        environment["SPOOLD_TRY_BIN"] = bin
        environment["SPOOLD_TRY_DIR"] = work
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        XCTAssertEqual(process.terminationStatus, 0, stdout)
        for key in ["uploads/cam7/fox.jpg", "uploads/photo 1.jpg", "uploads/reading;42.json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: work + "/data/bucket/" + key), "\(key): \(stdout)")
        }
    }
}
