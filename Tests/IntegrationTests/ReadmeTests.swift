import Foundation
import XCTest

/// The README and docs/ stay in step with the binary and with each other: docs/cli.md's
/// command-line reference is the binary's own `--help`, verbatim (regenerate it with
/// scripts/readme-cli), the README names only options spoold has and stays a short page, and every
/// relative link points to a file and a heading that exist.
final class ReadmeTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let commands = ["run", "drain", "enqueue", "status", "ls", "show", "retry", "purge", "check", "completion"]

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    func testCommandReference_matchesEveryCommandsHelp() throws {
        let reference = try Self.text("docs/cli.md")
        let overview = try SpooldProcess.run(["--help"]).stdout
        XCTAssertTrue(
            reference.contains("## spoold\n\n```\n\(overview)```"), "docs/cli.md's reference for 'spoold' differs from `spoold --help`; run scripts/readme-cli")
        for command in Self.commands {
            let help = try SpooldProcess.run([command, "--help"]).stdout
            XCTAssertTrue(
                reference.contains("## spoold \(command)\n\n```\n\(help)```"),
                "docs/cli.md's reference for '\(command)' differs from `spoold \(command) --help`; run scripts/readme-cli")
        }
    }

    /// A newcomer reads the README in five minutes; the reference lives in docs/.
    func testReadme_isAShortPage() throws {
        let lines = try Self.text("README.md").split(separator: "\n", omittingEmptySubsequences: false).count - 1
        XCTAssertLessThanOrEqual(lines, 400, "README.md has \(lines) lines; move reference text into docs/")
    }

    /// Every `--option` the README names is one of spoold's (in some command's `--help`), but for
    /// the few it names of other programs.
    func testReadme_namesOnlyOptionsSpooldHas() throws {
        var known: Set<String> = ["--help", "--version"]
        let option = try NSRegularExpression(pattern: #"(?<![A-Za-z0-9-])--[a-z0-9][a-z0-9.-]*[a-z0-9]"#)
        func options(_ text: String) -> [String] {
            option.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
        }
        known.formUnion(options(try SpooldProcess.run(["--help"]).stdout))
        for command in Self.commands { known.formUnion(options(try SpooldProcess.run([command, "--help"]).stdout)) }
        let others: Set<String> = [
            "--parallel",  // curl --parallel, the benchmark's ceiling
            "--check",  // scripts/package --check
            "--quick",  // scripts/bench --quick
            "--now",  // systemctl enable --now
            "--time-style",  // ls -l --time-style=full-iso
        ]
        let unknown = Set(options(try Self.text("README.md"))).subtracting(known).subtracting(others)
        XCTAssertEqual(unknown, [], "README.md names options no spoold command has: \(unknown.sorted())")
    }

    /// Relative links in README.md, docs/*.md and bench/results/*.md point to a file that exists and,
    /// with `#anchor`, to a heading of it (GitHub's anchors: lower case, punctuation dropped, spaces
    /// as hyphens, a repeated heading numbered).
    func testRelativeLinks_pointToFilesAndHeadingsThatExist() throws {
        var documents = ["README.md"]
        for folder in ["docs", "bench/results"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent(folder).path)) ?? []
            documents += names.filter { $0.hasSuffix(".md") }.sorted().map { "\(folder)/\($0)" }
        }
        XCTAssertTrue(documents.contains("docs/spool.md") && documents.contains("docs/cli.md"), "\(documents)")
        let link = try NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        var anchors: [String: Set<String>] = [:]
        func anchorsOf(_ relative: String) throws -> Set<String> {
            if let known = anchors[relative] { return known }
            var found: Set<String> = [], seen: [String: Int] = [:]
            for line in Self.prose(try Self.text(relative)) where line.hasPrefix("#") {
                let heading = line.drop { $0 == "#" }
                guard heading.hasPrefix(" ") else { continue }
                let slug = String(heading.dropFirst().lowercased().filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "_" })
                    .replacingOccurrences(of: " ", with: "-")
                let count = seen[slug, default: 0]
                seen[slug] = count + 1
                found.insert(count == 0 ? slug : "\(slug)-\(count)")
            }
            anchors[relative] = found
            return found
        }
        var broken: [String] = []
        for document in documents {
            for line in Self.prose(try Self.text(document)) {
                for match in link.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                    let target = String(line[Range(match.range(at: 1), in: line)!])
                    if target.range(of: #"^[a-z]+:"#, options: .regularExpression) != nil { continue }
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    let folder = (document as NSString).deletingLastPathComponent
                    let path = parts[0].isEmpty ? document : ((folder as NSString).appendingPathComponent(parts[0]) as NSString).standardizingPath
                    guard FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path) else {
                        broken.append("\(document): \(target): no file \(path)")
                        continue
                    }
                    if parts.count == 2, !(try anchorsOf(path)).contains(parts[1]) {
                        broken.append("\(document): \(target): no heading #\(parts[1]) in \(path)")
                    }
                }
            }
        }
        XCTAssertEqual(broken, [], broken.joined(separator: "\n"))
    }

    /// A document's lines outside fenced code.
    static func prose(_ text: String) -> [String] {
        var fenced = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            if line.hasPrefix("```") {
                fenced.toggle()
                return nil
            }
            return fenced ? nil : String(line)
        }
    }

    /// The project stands on its own documents: no README line, code comment or script cites the
    /// reliability notes kept outside the repository by their name and a rule number, nor a bare rule number
    /// of them in the code. A rule is said where it is used, or its section of docs/ is named.
    func testNothingCitesADocumentOutsideTheRepository() throws {
        let root = Self.root
        let outside = "RELIA" + "BILITY"
        let bareRule = try NSRegularExpression(pattern: #"\brules? [0-9]+\b"#)
        var offenders: [String] = []
        for folder in ["Sources", "Tests", "scripts", "contrib", "docs", "bench"] {
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
        let readme = try Self.text("README.md")
        for (number, line) in readme.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where line.contains(outside) {
            offenders.append("README.md:\(number + 1): \(line)")
        }
        XCTAssertEqual(offenders, [], offenders.joined(separator: "\n"))
    }
}
