import Foundation
import XCTest

/// The README's command-line reference is the binary's own `--help`, verbatim
/// (regenerate it with scripts/readme-cli).
final class ReadmeTests: XCTestCase {
    func testReadmeCommandReference_matchesEveryCommandsHelp() throws {
        let readmeURL = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let readme = try String(contentsOf: readmeURL, encoding: .utf8)
        let overview = try SpooldProcess.run(["--help"]).stdout
        XCTAssertTrue(
            readme.contains("### spoold\n\n```\n\(overview)```"), "README's reference for 'spoold' differs from `spoold --help`; run scripts/readme-cli")
        for command in ["run", "drain", "enqueue", "status", "ls", "show", "retry", "purge", "check"] {
            let help = try SpooldProcess.run([command, "--help"]).stdout
            XCTAssertTrue(
                readme.contains("### spoold \(command)\n\n```\n\(help)```"),
                "README's reference for '\(command)' differs from `spoold \(command) --help`; run scripts/readme-cli")
        }
    }
}
