import Foundation
import XCTest

/// `spoold completion bash|zsh|fish`: the scripts complete what --help declares. The bash one is
/// sourced in bash and asked, as bash asks it (`COMP_WORDS`, `COMP_CWORD`, the function); fish's
/// `complete -C` asks the fish one; the zsh one is parsed and loaded by zsh. zsh and fish are
/// installed by scripts/test from Debian; without them their checks are skipped, saying so.
final class CompletionTests: XCTestCase {
    private func script(_ shell: String) throws -> String {
        let spool = try TestSpool(self)
        let result = try SpooldProcess.run(["completion", shell])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let path = spool.root + "/completion." + shell
        try result.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A folder with a file and a subfolder, for file and directory completions.
    private func tree() throws -> String {
        let root = try TestSpool(self).root + "/tree"
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/file.txt"))
        return root
    }

    func testBash_completesCommandsOptionsAndValues_asBashAsksIt() throws {
        let path = try script("bash")
        let tree = try tree()
        // Each case: the words on the line (the last is the word being completed), what is offered.
        let cases: [([String], [String])] = [
            (["spoold", "dr"], ["drain"]),
            (["spoold", "c"], ["check", "completion"]),
            (["spoold", "run", "--trans"], ["--transport"]),
            (["spoold", "run", "--transport", ""], ["urlsession", "curl"]),
            (["spoold", "run", "--transport", "=", "cu"], ["curl"]),
            (["spoold", "drain", "--when-full", ""], ["block", "drop-oldest"]),
            (["spoold", "drain", "--max-t"], ["--max-time"]),
            (["spoold", "run", "--url", ""], []),
            (["spoold", "ls", ""], ["pending", "inflight", "failed", "done"]),
            (["spoold", "completion", ""], ["bash", "zsh", "fish"]),
            (["spoold", "enqueue", "--spool", tree + "/"], [tree + "/sub"]),
            (["spoold", "enqueue", tree + "/fi"], [tree + "/file.txt"]),
            (["spoold", "--sp"], ["--spool"]),
            (["spoold", "status", "--"], ["--spool", "--json", "--help"]),
        ]
        var program = "source '\(path)'\n"
        program += #"t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _spoold; local IFS=,; echo "${COMPREPLY[*]}"; }"#
        program += "\n"
        for (words, _) in cases { program += "t " + words.map { "'\($0)'" }.joined(separator: " ") + "\n" }
        let result = try ManualTests.run("/bin/bash", ["--norc", "--noprofile", "-c", program])
        XCTAssertEqual(result.status, 0, result.stderr)
        let answers = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(answers.count, cases.count + 1, result.stdout + result.stderr)
        for (index, (words, expected)) in cases.enumerated() where index < answers.count {
            let offered = answers[index].split(separator: ",").map(String.init)
            XCTAssertEqual(offered, expected, "completing \(words)")
        }
    }

    func testFish_completesCommandsOptionsAndValues() throws {
        guard let fish = ManualTests.tool("fish") else { throw XCTSkip("fish is not installed (scripts/test installs it from Debian)") }
        let path = try script("fish")
        XCTAssertEqual(try ManualTests.run(fish, ["-n", path]).status, 0)
        let asks = ["spoold dr", "spoold run --transport ", "spoold ls ", "spoold run --tra"]
        let program = "source '\(path)'\n" + asks.map { "complete -C '\($0)'; echo ---" }.joined(separator: "\n")
        let result = try ManualTests.run(fish, ["--no-config", "-c", program])
        XCTAssertEqual(result.status, 0, result.stderr)
        let answers = result.stdout.components(separatedBy: "---\n").map { block in
            block.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }.sorted()
        }
        XCTAssertEqual(answers.prefix(4), [["drain"], ["curl", "urlsession"], ["done", "failed", "inflight", "pending"], ["--transport"]])
    }

    func testZsh_parsesAndDefinesTheCompletionFunction() throws {
        guard let zsh = ManualTests.tool("zsh") else { throw XCTSkip("zsh is not installed (scripts/test installs it from Debian)") }
        let path = try script("zsh")
        let parse = try ManualTests.run(zsh, ["-n", path])
        XCTAssertEqual(parse.status, 0, parse.stderr)
        let load = try ManualTests.run(zsh, ["-f", "-c", "autoload -U compinit && compinit -u -D && source '\(path)' && whence -w _spoold"])
        XCTAssertEqual(load.status, 0, load.stderr)
        XCTAssertEqual(load.stdout, "_spoold: function\n", load.stderr)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains("'--transport=[What sends the requests: urlsession (Foundation) or curl"), text)
        XCTAssertTrue(text.contains(":NAME:(urlsession curl)'"), text)
    }

    func testUnknownShell_isAUsageError() throws {
        let result = try SpooldProcess.run(["completion", "tcsh"])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertTrue(result.stderr.contains("unknown shell 'tcsh' (expected bash, zsh or fish)"), result.stderr)
    }
}
