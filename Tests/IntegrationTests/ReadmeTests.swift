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
        for command in ["run", "drain", "enqueue", "status", "ls", "show", "retry", "purge", "check", "completion"] {
            let help = try SpooldProcess.run([command, "--help"]).stdout
            XCTAssertTrue(
                readme.contains("### spoold \(command)\n\n```\n\(help)```"),
                "README's reference for '\(command)' differs from `spoold \(command) --help`; run scripts/readme-cli")
        }
    }

    /// The project stands on its own documents: no README line, code comment or script cites the
    /// reliability notes kept outside the repository by their name and a rule number, nor a bare rule number
    /// of them in the code. A rule is said where it is used, or its README section is named.
    func testNothingCitesADocumentOutsideTheRepository() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let outside = "RELIA" + "BILITY"
        let bareRule = try NSRegularExpression(pattern: #"\brules? [0-9]+\b"#)
        var offenders: [String] = []
        for folder in ["Sources", "Tests", "scripts", "contrib", "docs"] {
            guard let files = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path) else { continue }
            for case let relative as String in files {
                let path = root.appendingPathComponent(folder).appendingPathComponent(relative).path
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let line = String(line)
                    let cites = line.contains(outside)
                        || (relative.hasSuffix(".swift") && bareRule.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil)
                    if cites { offenders.append("\(folder)/\(relative):\(number + 1): \(line)") }
                }
            }
        }
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        for (number, line) in readme.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where line.contains(outside) {
            offenders.append("README.md:\(number + 1): \(line)")
        }
        XCTAssertEqual(offenders, [], offenders.joined(separator: "\n"))
    }
}
