import ArgumentKit
import XCTest

final class ArgumentParserTests: XCTestCase {
    // MARK: Value forms

    func testValue_separateEqualsAndShortFormsAllWork() throws {
        XCTAssertEqual(try parse(["--spool", "/a", "f"]).value("spool"), "/a")
        XCTAssertEqual(try parse(["--spool=/b", "f"]).value("spool"), "/b")
        XCTAssertEqual(try parse(["-s", "/c", "f"]).value("spool"), "/c")
    }

    func testValue_equalsSplitsAtTheFirstEqualsOnly() throws {
        XCTAssertEqual(try parse(["--field=a=b", "f"]).value("field"), "a=b")
    }

    func testValue_notGivenIsNil() throws {
        let parsed = try parse(["f"])
        XCTAssertNil(parsed.value("spool"))
        XCTAssertEqual(parsed.values("header"), [])
        XCTAssertFalse(parsed.flag("verbose"))
    }

    func testValue_givenTwiceKeepsTheLast() throws {
        XCTAssertEqual(try parse(["--spool", "/a", "-s", "/b", "--spool=/c", "f"]).value("spool"), "/c")
    }

    func testRepeatedValue_keepsEveryOccurrenceInOrder() throws {
        let parsed = try parse(["--header", "A: 1", "f", "--header=B: 2", "--header", "A: 3"])
        XCTAssertEqual(parsed.values("header"), ["A: 1", "B: 2", "A: 3"])
        XCTAssertEqual(parsed.positionals, ["f"])
    }

    func testValue_mayBeEmpty() throws {
        XCTAssertEqual(try parse(["--field", "", "f"]).value("field"), "")
        XCTAssertEqual(try parse(["--field=", "f"]).value("field"), "")
    }

    func testValue_keepsUnicodeIntact() throws {
        let parsed = try parse(["--field", "naïve café 🚀", "--header=X-Name: Zoë", "données.txt"])
        XCTAssertEqual(parsed.value("field"), "naïve café 🚀")
        XCTAssertEqual(parsed.values("header"), ["X-Name: Zoë"])
        XCTAssertEqual(parsed.positionals, ["données.txt"])
    }

    /// Documented choice: the next argument is the value, whatever it looks like (as getopt does).
    func testValue_startingWithDashIsTakenWhenItFollowsTheOption() throws {
        let parsed = try parse(["--header", "-X", "--field", "--verbose", "--retries", "-3", "f"])
        XCTAssertEqual(parsed.values("header"), ["-X"])
        XCTAssertEqual(parsed.value("field"), "--verbose")
        XCTAssertFalse(parsed.flag("verbose"))
        XCTAssertEqual(try parsed.int("retries"), -3)
    }

    func testValue_thatLooksLikeHelpIsAValueNotAHelpRequest() throws {
        let parsed = try parse(["--field", "--help", "f"])
        XCTAssertEqual(parsed.value("field"), "--help")
        XCTAssertFalse(parsed.helpRequested)
    }

    func testValue_missingAtTheEndNamesOptionAndPlaceholder() {
        XCTAssertEqual(errorMessage(["f", "--spool"]), "option '--spool' needs a value DIR")
        XCTAssertEqual(errorMessage(["f", "-s"]), "option '-s' needs a value DIR")
        XCTAssertEqual(errorMessage(["f", "--field"]), "option '--field' needs a value VALUE")
    }

    // MARK: Flags

    func testFlag_longAndShortSetIt() throws {
        XCTAssertTrue(try parse(["--verbose", "f"]).flag("verbose"))
        XCTAssertTrue(try parse(["-v", "f"]).flag("verbose"))
        XCTAssertTrue(try parse(["f", "--dry-run", "--dry-run"]).flag("dry-run"))
        XCTAssertFalse(try parse(["-v", "f"]).flag("dry-run"))
    }

    func testFlag_doesNotConsumeTheNextArgument() throws {
        XCTAssertEqual(try parse(["--verbose", "f"]).positionals, ["f"])
    }

    func testFlag_withAnAttachedValueIsAnError() {
        XCTAssertEqual(
            errorMessage(["--verbose=yes", "f"]), "option '--verbose' is a flag and takes no value (got '--verbose=yes')")
        XCTAssertEqual(
            errorMessage(["--dry-run=", "f"]), "option '--dry-run' is a flag and takes no value (got '--dry-run=')")
    }

    // MARK: Positionals and `--`

    func testDoubleDash_makesEverythingAfterItPositional() throws {
        let parsed = try parse(["-v", "--", "-x", "--spool", "--help", "--", "-"])
        XCTAssertEqual(parsed.positionals, ["-x", "--spool", "--help", "--", "-"])
        XCTAssertTrue(parsed.flag("verbose"))
        XCTAssertNil(parsed.value("spool"))
        XCTAssertFalse(parsed.helpRequested)
    }

    func testLoneDash_isPositional() throws {
        XCTAssertEqual(try parse(["-", "-v"]).positionals, ["-"])
    }

    func testPositionals_interleaveWithOptionsAndKeepOrder() throws {
        XCTAssertEqual(try parse(["a", "-v", "b", "--spool", "d", "c"]).positionals, ["a", "b", "c"])
    }

    func testPositionals_emptyStringIsAPositional() throws {
        XCTAssertEqual(try parse([""]).positionals, [""])
    }

    func testPositionals_repeatingNeedsAtLeastOne() {
        XCTAssertEqual(errorMessage([]), "missing argument FILE")
        XCTAssertEqual(errorMessage(["--spool", "/s"]), "missing argument FILE")
    }

    func testPositionals_tooFewNamesEveryMissingOne() {
        XCTAssertEqual(errorMessage([], copySpec), "missing arguments SOURCE DEST")
        XCTAssertEqual(errorMessage(["a"], copySpec), "missing argument DEST")
    }

    func testPositionals_optionalMayBeLeftOut() throws {
        XCTAssertEqual(try parse(["a", "b"], copySpec).positionals, ["a", "b"])
        XCTAssertEqual(try parse(["a", "b", "c"], copySpec).positionals, ["a", "b", "c"])
    }

    func testPositionals_tooManyNamesWhatIsExpected() {
        XCTAssertEqual(errorMessage(["a", "b", "c", "d"], copySpec), "unexpected argument 'd' (expected only SOURCE DEST [NOTE])")
        XCTAssertEqual(errorMessage(["x"], statusSpec), "unexpected argument 'x' (this command takes no arguments)")
    }

    // MARK: Help

    func testHelp_longAndShortFormsSetHelpRequested() throws {
        XCTAssertTrue(try parse(["--help"]).helpRequested)
        XCTAssertTrue(try parse(["-h"]).helpRequested)
        XCTAssertFalse(try parse(["f"]).helpRequested)
    }

    func testHelp_worksWithNothingElseEvenWhenPositionalsAreRequired() throws {
        let parsed = try parse(["--help"], copySpec)
        XCTAssertTrue(parsed.helpRequested)
        XCTAssertEqual(parsed.positionals, [])
    }

    func testHelp_anywhereSilencesOtherErrors() throws {
        XCTAssertTrue(try parse(["--spoo", "x", "--verbose=1", "-h"]).helpRequested)
        XCTAssertTrue(try parse(["a", "b", "c", "d", "e", "--help"], copySpec).helpRequested)
        XCTAssertTrue(try parse(["--help", "--spool"]).helpRequested)
    }

    func testHelp_afterDoubleDashIsAPositional() throws {
        let parsed = try parse(["--", "--help"])
        XCTAssertFalse(parsed.helpRequested)
        XCTAssertEqual(parsed.positionals, ["--help"])
    }

    func testHelp_withAnAttachedValueIsAnError() {
        XCTAssertEqual(errorMessage(["--help=yes", "f"]), "option '--help' takes no value")
    }

    // MARK: Unknown options

    func testUnknownOption_suggestsTheClosestName() {
        XCTAssertEqual(errorMessage(["--spoo", "/s", "f"]), "unknown option '--spoo' (did you mean '--spool'?)")
        XCTAssertEqual(errorMessage(["--verbsoe", "f"]), "unknown option '--verbsoe' (did you mean '--verbose'?)")
        XCTAssertEqual(errorMessage(["--hlep"]), "unknown option '--hlep' (did you mean '--help'?)")
    }

    func testUnknownOption_suggestionIgnoresAnAttachedValue() {
        XCTAssertEqual(errorMessage(["--spol=/s", "f"]), "unknown option '--spol' (did you mean '--spool'?)")
    }

    func testUnknownOption_suggestsByPrefix() {
        XCTAssertEqual(errorMessage(["--ret", "3", "f"]), "unknown option '--ret' (did you mean '--retries'?)")
    }

    func testUnknownOption_withoutAnyCloseNameSaysJustThat() {
        XCTAssertEqual(errorMessage(["--frobnicate", "f"]), "unknown option '--frobnicate'")
        XCTAssertEqual(errorMessage(["--json"]), "unknown option '--json'")
    }

    func testUnknownOption_singleDashLongNameSuggestsDoubleDash() {
        XCTAssertEqual(errorMessage(["-spool", "/s", "f"]), "unknown option '-spool' (did you mean '--spool'?)")
    }

    func testUnknownOption_bundledShortsExplainTheRule() {
        XCTAssertEqual(
            errorMessage(["-vq", "f"]),
            "unknown option '-vq' (write short options one at a time, with any value as the next argument: '-v ...')")
        XCTAssertEqual(
            errorMessage(["-s/tmp", "f"]),
            "unknown option '-s/tmp' (write short options one at a time, with any value as the next argument: '-s ...')")
    }

    func testUnknownOption_shortPointsAtDoubleDashForDashedPositionals() {
        XCTAssertEqual(errorMessage(["-x"]), "unknown option '-x' (to pass it as FILE, put it after '--')")
        XCTAssertEqual(errorMessage(["-5"], statusSpec), "unknown option '-5'")
    }

    func testUnknownOption_isReportedBeforeALaterProblem() {
        XCTAssertEqual(errorMessage(["--nope", "--spool"]), "unknown option '--nope'")
    }

    func testUnknownOption_tripleDashIsUnknown() {
        XCTAssertEqual(errorMessage(["---", "f"]), "unknown option '---'")
    }

    func testError_carriesTheCommandName() {
        XCTAssertThrowsError(try ArgumentParser.parse(["--nope"], for: statusSpec)) { error in
            XCTAssertEqual(error as? ArgumentError, ArgumentError("unknown option '--nope'", command: "status"))
            XCTAssertEqual("\(error)", "unknown option '--nope'")
        }
    }
}
