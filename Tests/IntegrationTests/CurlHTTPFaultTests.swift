import Foundation
import UploadReceiver
import XCTest

/// Every `HTTPFaultTests` case again with `--transport curl` (libcurl's multi interface), plus
/// what only that transport has.
final class CurlHTTPFaultTests: HTTPFaultTests {
    override class var transportArguments: [String] { ["--transport", "curl"] }

    func testMaxTime_cancelsTheUploadOnTheCurlThread_andHandsItsAttemptBack() throws {
        let receiver = UploadReceiver(script: .always(.faulted(.neverAnswer)))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        try spool.drop("stuck.bin", payload(1000, seed: 8))
        let started = Date()

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--transport", "curl",
             "--max-time", "1", "--timeout", "60"], timeout: 30)

        XCTAssertEqual(result.exitCode, 5, result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15.0, "cancelAll ends the transfer the server never answers")
        XCTAssertTrue(result.stderr.contains("--max-time grace over: cancelling 1 upload(s)"), result.stderr)
        let pending = spool.files(in: "pending")
        XCTAssertEqual(pending.count, 2)
        XCTAssertTrue(pending.allSatisfy { $0.contains(".a0.") }, "the cancelled attempt did not count: \(pending)")
    }

    func testCurlOnlyOptions_withURLSession_areUsageErrors() throws {
        let spool = try TestSpool(self)
        for option in [["--cacert", "/etc/hostname"], ["--capath", "/etc"]] {
            let result = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/"] + option)
            XCTAssertEqual(result.exitCode, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains("needs --transport curl"), result.stderr)
        }
        let unknown = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/", "--transport", "wget"])
        XCTAssertEqual(unknown.exitCode, 2)
        XCTAssertTrue(unknown.stderr.contains("curl or urlsession"), unknown.stderr)
    }
}
