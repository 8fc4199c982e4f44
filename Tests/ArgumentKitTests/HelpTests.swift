import ArgumentKit
import XCTest

final class HelpTests: XCTestCase {
    func testCommandHelp_snapshot() {
        let expected = """
            Usage: spoold enqueue [options] FILE...

            Copy files into the spool for upload.

            Arguments:
              FILE...                  A file to enqueue.

            Options:
              -s, --spool DIR          The spool directory. (default: $SPOOLD_SPOOL, then ./spool)
                  --header NAME:VALUE  Extra HTTP header. (repeatable)
                  --field VALUE        A metadata field.
                  --retries N          Attempts before giving up.
                  --timeout DURATION   Per-attempt timeout.
              -v, --verbose            Log every step.
                  --dry-run            Check, but change nothing.
              -h, --help               Show this help.

            Exit codes:
              0  all files enqueued
              2  bad arguments
            """
        XCTAssertEqual(ArgumentParser.help(for: enqueueSpec, program: "spoold"), expected)
    }

    func testCommandHelp_withoutPositionalsOrDiscussionHasNoSuchSections() {
        let expected = """
            Usage: spoold status [options]

            Show the spool.

            Options:
                  --json  Machine-readable output.
              -h, --help  Show this help.
            """
        XCTAssertEqual(ArgumentParser.help(for: statusSpec, program: "spoold"), expected)
    }

    func testUsage_showsOptionalPositionalsInBrackets() {
        let help = ArgumentParser.help(for: copySpec, program: "spoold")
        XCTAssertTrue(help.hasPrefix("Usage: spoold copy [options] SOURCE DEST [NOTE]\n"), help)
        XCTAssertTrue(help.contains("\n  [NOTE]      A remark.\n"), help)
    }

    func testUsage_overrideGivesOneLinePerForm() {
        var spec = statusSpec
        spec.usage = "[options]\n--watch [--interval DURATION]"
        let help = ArgumentParser.help(for: spec, program: "spoold")
        XCTAssertTrue(
            help.hasPrefix("Usage: spoold status [options]\n       spoold status --watch [--interval DURATION]\n\n"), help)
    }

    func testUsage_commandWithoutNameUsesTheProgramAlone() {
        let spec = CommandSpec(name: "", abstract: "", positionals: [PositionalSpec("PORT", help: "", optional: true)])
        XCTAssertTrue(ArgumentParser.help(for: spec, program: "spoold-receiver").hasPrefix("Usage: spoold-receiver [options] [PORT]\n\nArguments:"))
    }

    func testHelp_wrapsLongHelpUnderItsColumnWithinOneHundredColumns() {
        let words = (1...40).map { "word\($0)" }.joined(separator: " ")
        let spec = CommandSpec(name: "x", abstract: "", options: [OptionSpec("long", valueName: "V", help: words)])
        let help = ArgumentParser.help(for: spec, program: "p")
        let lines = help.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.allSatisfy { $0.count <= 100 }, help)
        let optionLines = lines.filter { $0.contains("word") }
        XCTAssertGreaterThan(optionLines.count, 1)
        XCTAssertTrue(optionLines[0].hasPrefix("      --long V  word1 word2 "), optionLines[0])
        for continuation in optionLines.dropFirst() {
            XCTAssertTrue(continuation.hasPrefix(String(repeating: " ", count: 16) + "word"), continuation)
        }
        XCTAssertEqual(optionLines.map { $0.dropFirst(16) }.joined(separator: " "), words, "no word lost or split")
    }

    func testHelp_veryLongLabelPutsItsHelpOnTheNextLine() {
        let spec = CommandSpec(
            name: "x", abstract: "",
            options: [
                OptionSpec("an-extremely-long-option-name", valueName: "VALUE", help: "Long one."),
                .flag("q", help: "Short one."),
            ])
        let expected = """
            Usage: p x [options]

            Options:
                  --an-extremely-long-option-name VALUE
                          Long one.
                  --q     Short one.
              -h, --help  Show this help.
            """
        XCTAssertEqual(ArgumentParser.help(for: spec, program: "p"), expected)
    }

    func testHelp_alignsUnicodeByCharacters() {
        let spec = CommandSpec(name: "x", abstract: "", options: [OptionSpec("naïve", valueName: "ÉTÉ", help: "Ok.")])
        XCTAssertTrue(ArgumentParser.help(for: spec, program: "p").contains("\n      --naïve ÉTÉ  Ok.\n  -h, --help       Show"))
    }

    func testDiscussion_keepsShortLinesVerbatimAndWrapsLongOnesWithTheirIndent() {
        let long = "    " + (1...30).map { "w\($0)xxx" }.joined(separator: " ")
        let spec = CommandSpec(name: "x", abstract: "", discussion: "A  table:\n\n  0    ok\n" + long)
        let help = ArgumentParser.help(for: spec, program: "p")
        XCTAssertTrue(help.contains("\n\nA  table:\n\n  0    ok\n    w1xxx "), help)
        let tail = help.split(separator: "\n").suffix(2)
        XCTAssertEqual(tail.count, 2)
        XCTAssertTrue(tail.allSatisfy { $0.hasPrefix("    w") && $0.count <= 100 }, help)
    }

    func testOverview_listsCommandsAlignedThenTheFooter() {
        let expected = """
            Usage: spoold <command> [options]

            A durable spool-directory uploader.

            Commands:
              enqueue  Copy files into the spool for upload.
              copy     Copy one item.
              status   Show the spool.

            See 'spoold <command> --help' for a command's options.
            """
        let overview = ArgumentParser.overview(
            program: "spoold", abstract: "A durable spool-directory uploader.",
            commands: [enqueueSpec, copySpec, statusSpec], footer: "See 'spoold <command> --help' for a command's options.")
        XCTAssertEqual(overview, expected)
    }

    func testOverview_withoutFooterEndsAtTheCommands() {
        let overview = ArgumentParser.overview(program: "p", abstract: "", commands: [statusSpec], footer: nil)
        XCTAssertEqual(overview, "Usage: p <command> [options]\n\nCommands:\n  status  Show the spool.")
    }

    func testOverview_ofAProgram_listsItsOwnOptionsInTheUsageAndWithHelp() {
        let program = ProgramSpec(
            name: "p", summary: "a tool", abstract: "Does things.", commands: [statusSpec],
            options: [.flag("version", help: "Print the version.")], footer: "Bye.")
        XCTAssertEqual(ArgumentParser.overview(of: program), """
            Usage: p <command> [options]
                   p --version

            Does things.

            Commands:
              status  Show the spool.

            Options:
              -h, --help     Show this help.
                  --version  Print the version.

            Bye.
            """)
    }

    func testHelp_isDeterministic() {
        XCTAssertEqual(
            ArgumentParser.help(for: enqueueSpec, program: "spoold"), ArgumentParser.help(for: enqueueSpec, program: "spoold"))
    }
}
