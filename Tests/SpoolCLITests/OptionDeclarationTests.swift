import ArgumentKit
import SpoolCLI
import XCTest

/// spoold's command line declares each option once: an option that several commands have (the
/// spool, the retry budgets, --json, --header, the transport's) reads the same in each one's
/// --help, with the same default, and a command that says what it does for it there keeps that
/// declaration (`OptionSpec.withHelp`).
final class OptionDeclarationTests: XCTestCase {
    func testEveryOptionSharedByCommands_isOneDeclaration() {
        XCTAssertEqual(CLI.program.problems, [])
    }

    /// The test above has something to compare: options that several commands share.
    func testCommandsShareOptions() {
        var owners: [String: Set<String>] = [:]
        for command in CLI.program.commands {
            for option in command.options { owners[option.name, default: []].insert(command.name) }
        }
        for (option, commands) in [("spool", 9), ("max-attempts", 3), ("json", 4), ("header", 4), ("transport", 3)] {
            XCTAssertEqual(owners[option]?.count, commands, "--\(option): \(owners[option] ?? [])")
        }
    }
}
