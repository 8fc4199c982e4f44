import Foundation
import XCTest

/// The manual pages in docs/man/ are what `spoold-docs` makes now from the command-line specs and
/// docs/spool.md (as ReadmeTests checks docs/cli.md against --help), and they render without a
/// warning; scripts/install-docs installs them with the completions.
final class ManualTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var committed: String { repository.appendingPathComponent("docs/man").path }

    static func pages(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".5") || $0.hasSuffix(".8") }.sorted()
    }

    /// Runs a program to its end: its exit status, stdout and stderr.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out"), err = folder.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }

    static func tool(_ name: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func testCommittedPages_areWhatTheSpecsAndTheSpoolDocumentMakeNow() throws {
        let docs = URL(fileURLWithPath: SpooldProcess.binaryPath).deletingLastPathComponent().appendingPathComponent("spoold-docs").path
        guard FileManager.default.isExecutableFile(atPath: docs) else { throw XCTSkip("spoold-docs is not built beside spoold") }
        let output = try TestSpool(self).root + "/man"
        let made = try Self.run(docs, [output, Self.repository.appendingPathComponent("docs/spool.md").path])
        XCTAssertEqual(made.status, 0, made.stderr)

        let pages = Self.pages(in: output)
        XCTAssertEqual(Self.pages(in: Self.committed), pages, "docs/man/ holds other pages; run scripts/readme-cli")
        for page in pages {
            let fresh = try String(contentsOfFile: output + "/" + page, encoding: .utf8)
            let kept = (try? String(contentsOfFile: Self.committed + "/" + page, encoding: .utf8)) ?? ""
            XCTAssertTrue(fresh == kept, "docs/man/\(page) differs from what the specs and docs/spool.md make now; run scripts/readme-cli")
        }
    }

    /// Every command of `spoold --help` has its page, the program's page lists it, and the
    /// protocol page has every section of docs/spool.md.
    func testPages_coverEveryCommand_andEveryPartOfTheOnDiskProtocol() throws {
        let help = try SpooldProcess.run(["--help"]).stdout
        let commandLines = help.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
        let commands = commandLines.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        XCTAssertTrue(commands.contains("completion") && commands.contains("run"), "\(commands)")
        let program = try String(contentsOfFile: Self.committed + "/spoold.8", encoding: .utf8)
        for command in commands {
            XCTAssertTrue(FileManager.default.fileExists(atPath: Self.committed + "/spoold-\(command).8"), "no page for \(command)")
            XCTAssertTrue(program.contains(".It Cm \"\(command)\"\n"), "spoold(8) does not list \(command)")
            XCTAssertTrue(program.contains(".Xr \"spoold-\(command)\" 8"), "spoold(8) does not point to spoold-\(command)(8)")
        }
        let run = try String(contentsOfFile: Self.committed + "/spoold-run.8", encoding: .utf8)
        XCTAssertTrue(run.contains(".It Fl \"-transport\" Ar \"NAME\"\n"), run)
        XCTAssertTrue(run.contains("One of: urlsession, curl."), run)

        let document = try String(contentsOf: Self.repository.appendingPathComponent("docs/spool.md"), encoding: .utf8)
        XCTAssertTrue(document.hasPrefix("# The on-disk protocol\n"), String(document.prefix(80)))
        let spool = try String(contentsOfFile: Self.committed + "/spoold-spool.5", encoding: .utf8)
        let headings = document.split(separator: "\n").filter { $0.hasPrefix("## ") }
        XCTAssertGreaterThan(headings.count, 5)
        for heading in headings {
            let title = heading.dropFirst(3).filter { $0 != "`" }
            XCTAssertTrue(spool.contains(".Ss \"\(title)\"\n"), "spoold-spool(5) lacks '\(title)'")
        }
        XCTAssertTrue(spool.contains("\n.Dt SPOOLD-SPOOL 5\n"), spool)
    }

    /// `mandoc -T lint` at warning level (groff -ww where mandoc is missing): nothing to say.
    func testPages_renderWithoutWarnings() throws {
        let pages = Self.pages(in: Self.committed)
        XCTAssertGreaterThan(pages.count, 10)
        if let mandoc = Self.tool("mandoc") {
            for page in pages {
                let lint = try Self.run(mandoc, ["-T", "lint", "-W", "warning", Self.committed + "/" + page])
                XCTAssertEqual(lint.status, 0, "\(page): \(lint.stdout)\(lint.stderr)")
                XCTAssertEqual(lint.stdout + lint.stderr, "", page)
            }
        }
        guard let groff = Self.tool("groff") else {
            if Self.tool("mandoc") == nil {
                throw XCTSkip("neither mandoc nor groff is installed (scripts/test installs mandoc from Debian)")
            }
            return
        }
        for page in pages {
            let render = try Self.run(groff, ["-ww", "-mdoc", "-Tutf8", "-z", Self.committed + "/" + page])
            XCTAssertEqual(render.stderr, "", page)
        }
    }

    func testInstallDocs_placesPagesAndCompletions_whereEachShellAndManLook() throws {
        let stage = try TestSpool(self).root + "/stage"
        let result = try Self.run(
            "/bin/bash", [Self.repository.appendingPathComponent("scripts/install-docs").path, "--binary", SpooldProcess.binaryPath,
                          "--prefix", "/usr", "--gzip"],
            environment: ["DESTDIR": stage])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        for page in Self.pages(in: Self.committed) {
            let section = page.split(separator: ".").last!
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(stage)/usr/share/man/man\(section)/\(page).gz"), page)
        }
        let bash = try String(contentsOfFile: stage + "/usr/share/bash-completion/completions/spoold", encoding: .utf8)
        XCTAssertEqual(bash, try SpooldProcess.run(["completion", "bash"]).stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: stage + "/usr/share/zsh/vendor-completions/_spoold"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: stage + "/usr/share/fish/vendor_completions.d/spoold.fish"))
    }
}
