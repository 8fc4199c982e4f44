import ArgumentKit
import XCTest

final class CommandSpecTests: XCTestCase {
    func testProblems_soundSpecsHaveNone() {
        XCTAssertEqual(enqueueSpec.problems, [])
        XCTAssertEqual(copySpec.problems, [])
        XCTAssertEqual(statusSpec.problems, [])
    }

    func testProblems_duplicateAndReservedNames() {
        let spec = CommandSpec(
            name: "x", abstract: "",
            options: [
                .flag("a", short: "a", help: ""), .flag("a", short: "a", help: ""), .flag("help", help: ""),
                .flag("b", short: "h", help: ""),
            ])
        XCTAssertEqual(
            spec.problems,
            [
                "option '--a' is declared twice", "short option '-a' is declared twice", "option '--help' is reserved for help",
                "option '-h' is reserved for help",
            ])
    }

    func testProblems_malformedNames() {
        let spec = CommandSpec(
            name: "x", abstract: "",
            options: [.flag("--a", help: ""), .flag("a=b", help: ""), .flag("", help: ""), .flag("c", short: "-", help: "")])
        XCTAssertEqual(
            spec.problems,
            [
                "option name '--a' must be non-empty, without leading dashes, '=' or spaces",
                "option name 'a=b' must be non-empty, without leading dashes, '=' or spaces",
                "option name '' must be non-empty, without leading dashes, '=' or spaces",
                "short name '-' of '--c' is not usable",
            ])
    }

    func testProblems_positionalOrder() {
        let spec = CommandSpec(
            name: "x", abstract: "",
            positionals: [
                PositionalSpec("A", help: "", repeating: true), PositionalSpec("B", help: "", optional: true),
                PositionalSpec("C", help: ""), PositionalSpec("C", help: ""),
            ])
        XCTAssertEqual(
            spec.problems,
            [
                "repeating positional A must be the last one", "required positional C follows an optional one",
                "positional C is declared twice", "required positional C follows an optional one",
            ])
    }

    func testOptionSpec_flagFactoryAndDefaults() {
        let flag = OptionSpec.flag("verbose", short: "v", help: "Talk.")
        XCTAssertEqual(flag.kind, .flag)
        XCTAssertEqual(flag.short, "v")
        let value = OptionSpec("spool", help: "Dir.")
        XCTAssertEqual(value.kind, .value)
        XCTAssertEqual(value.valueName, "VALUE")
        XCTAssertNil(value.short)
        XCTAssertNil(value.defaultDescription)
    }
}
