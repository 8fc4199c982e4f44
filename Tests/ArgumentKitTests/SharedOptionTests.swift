import ArgumentKit
import XCTest

/// Options declared once: a default that is both the help's and the value's, and a program whose
/// commands share an option only as one declaration.
final class SharedOptionTests: XCTestCase {
    private let attempts = DefaultedOption.integer("attempts", help: "Attempts per item (1-9).", range: 1...9, default: 3)
    private let timeout = DefaultedOption.seconds("timeout", help: "Deadline.", range: 0.1...600, default: 300)
    private let partSize = DefaultedOption.bytes("part-size", help: "Part size.", range: 1...(1 << 30), default: 16 << 20)

    private func command(_ name: String, _ options: [OptionSpec]) -> CommandSpec {
        CommandSpec(name: name, abstract: "", options: options)
    }

    private func program(_ commands: [CommandSpec]) -> ProgramSpec {
        ProgramSpec(name: "tool", summary: "", abstract: "", commands: commands, options: [.flag("version", help: "Version.")])
    }

    // MARK: DefaultedOption

    func testDefault_isTheHelpsAndTheValueNotGiven() throws {
        XCTAssertEqual(attempts.spec.defaultDescription, "3")
        XCTAssertEqual(timeout.spec.defaultDescription, "300")
        XCTAssertEqual(partSize.spec.defaultDescription, "16M")
        let spec = command("x", [attempts.spec, timeout.spec, partSize.spec])
        let none = try ArgumentParser.parse([], for: spec)
        XCTAssertEqual(try attempts.value(in: none), 3)
        XCTAssertEqual(try timeout.value(in: none), 300)
        XCTAssertEqual(try partSize.value(in: none), 16 << 20)
        let given = try ArgumentParser.parse(["--attempts", "5", "--timeout", "1.5s", "--part-size", "5M"], for: spec)
        XCTAssertEqual(try attempts.value(in: given), 5)
        XCTAssertEqual(try timeout.value(in: given), 1.5)
        XCTAssertEqual(try partSize.value(in: given), 5 << 20)
        XCTAssertTrue(ArgumentParser.help(for: spec, program: "tool").contains("Attempts per item (1-9). (default: 3)"))
    }

    func testValue_outsideTheRange_isAUsageError() throws {
        let spec = command("x", [attempts.spec])
        XCTAssertThrowsError(try attempts.value(in: try ArgumentParser.parse(["--attempts", "10"], for: spec))) { error in
            XCTAssertEqual((error as? ArgumentError)?.message, "option '--attempts' must be between 1 and 9, got 10")
        }
    }

    func testWithHelp_keepsTheDeclarationButTheHelp() {
        let forRepair = attempts.withHelp("With --repair: the daemon's --attempts.")
        XCTAssertEqual(forRepair.spec.help, "With --repair: the daemon's --attempts.")
        XCTAssertEqual(forRepair.spec.declaredHelp, "Attempts per item (1-9).")
        XCTAssertEqual(forRepair.spec.defaultDescription, "3")
        XCTAssertEqual(forRepair.defaultValue, 3)
    }

    func testShortText_isWhatOneWouldType() {
        XCTAssertEqual(ByteUnits.shortText(16 << 20), "16M")
        XCTAssertEqual(ByteUnits.shortText(5 << 30), "5G")
        XCTAssertEqual(ByteUnits.shortText(1536), "1536")
        XCTAssertEqual(ByteUnits.shortText(0), "0")
    }

    // MARK: ProgramSpec.problems

    func testProblems_sharedDeclarationsAgree() {
        let sound = program([
            command("run", [attempts.spec, timeout.spec, .flag("json", help: "JSON.")]),
            command("check", [attempts.withHelp("With --repair: the daemon's.").spec, .flag("json", help: "JSON.")]),
        ])
        XCTAssertEqual(sound.problems, [])
    }

    func testProblems_aSecondDeclarationWithAnotherDefault() {
        var other = attempts.spec
        other.defaultDescription = "5"
        let spec = program([command("run", [attempts.spec]), command("check", [other])])
        XCTAssertEqual(spec.problems, ["'--attempts' of check is not run's: default '5', not '3'"])
    }

    func testProblems_aSecondDeclarationWithOtherHelp() {
        let spec = program([
            command("list", [.flag("json", help: "Print JSON instead of a table.")]),
            command("check", [.flag("json", help: "Print JSON instead of text.")]),
        ])
        XCTAssertEqual(
            spec.problems, ["'--json' of check is not list's: help 'Print JSON instead of text.', not 'Print JSON instead of a table.'"])
    }

    func testProblems_kindValueNameCompletionAndShortName() {
        let spec = program([
            command("a", [OptionSpec("spool", short: "s", valueName: "DIR", help: "Dir."), .flag("version", help: "Version.")]),
            command("b", [OptionSpec("spool", valueName: "PATH", help: "Dir."), OptionSpec("version", help: "Version.")]),
        ])
        XCTAssertEqual(
            spec.problems,
            [
                "'--spool' of b is not a's: short name none, not -s",
                "'--spool' of b is not a's: value name PATH, not DIR",
                "'--spool' of b is not a's: completion file, not directory",
                "'--version' of b is not tool's: kind value, not flag",
            ])
    }

    func testProblems_includeEachCommandsOwn() {
        let spec = program([command("a", [.flag("x", help: ""), .flag("x", help: "")])])
        XCTAssertEqual(spec.problems, ["a: option '--x' is declared twice"])
    }
}
